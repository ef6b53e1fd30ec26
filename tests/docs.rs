//! The examples in README.md, docs/usage.md and docs/tls.md show real output: every `$ kdissect ...` block
//! is run, and each line it shows (between `...` elisions) must be a line of the real output.

use std::process::Command;

/// (command arguments, shown lines) of each ```text block that starts with `$ kdissect`.
fn examples(doc: &str) -> Vec<(Vec<String>, Vec<String>)> {
    let mut out = Vec::new();
    let mut lines = doc.lines();
    while let Some(l) = lines.next() {
        if l.trim() != "```text" {
            continue;
        }
        let block: Vec<&str> = lines.by_ref().take_while(|l| l.trim() != "```").collect();
        let Some(cmd) = block.first().and_then(|c| c.strip_prefix("$ kdissect ")) else {
            continue;
        };
        // Commands with pipes or shell syntax are not run here.
        if cmd.contains('|') || cmd.contains('\'') || cmd.contains('>') {
            continue;
        }
        // Only the first command of the block: later `$` lines start another example.
        let shown: Vec<String> = block[1..]
            .iter()
            .take_while(|l| !l.starts_with("$ "))
            .map(|l| l.to_string())
            .collect();
        out.push((cmd.split_whitespace().map(str::to_string).collect(), shown));
    }
    out
}

fn check(doc_path: &str) -> usize {
    let root = env!("CARGO_MANIFEST_DIR");
    let doc = std::fs::read_to_string(format!("{root}/{doc_path}")).expect("doc");
    let mut checked = 0;
    for (args, shown) in examples(&doc) {
        let out = Command::new(env!("CARGO_BIN_EXE_kdissect"))
            .args(&args)
            .current_dir(root)
            .env("NO_COLOR", "1")
            .output()
            .expect("run");
        let mut real = String::from_utf8_lossy(&out.stdout).into_owned();
        real.push_str(&String::from_utf8_lossy(&out.stderr));
        let real: Vec<&str> = real.lines().collect();
        for line in shown
            .iter()
            .filter(|l| l.trim() != "..." && !l.trim().is_empty())
        {
            assert!(
                real.iter().any(|r| r.trim_end() == line.trim_end()),
                "{doc_path}: `kdissect {}` does not print\n{line}\n---- it prints:\n{}",
                args.join(" "),
                real.join("\n")
            );
        }
        checked += 1;
    }
    checked
}

#[test]
fn readme_examples_are_real_output() {
    assert!(check("README.md") >= 2);
}

#[test]
fn usage_examples_are_real_output() {
    assert!(check("docs/usage.md") >= 8);
}

#[test]
fn tls_examples_are_real_output() {
    assert!(check("docs/tls.md") >= 2);
}
