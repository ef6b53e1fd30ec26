//! `kdissect completions`, `kdissect man`, `kdissect help` and `kdissect example`.

use crate::flags::{Cli, ColorChoice, Commands, Shell};
use crate::sinks::titled::{self, Views};
use crate::{fail, write_failed};
use clap::CommandFactory;
use kdissect::kafka::{names, Direction, Node, NodeKind};
use kdissect::render::Style;
use std::io::{self, IsTerminal, Write};
use std::process::ExitCode;

/// Marks the one element of each array of an example as a sample, in its length's description.
fn sample_elements(n: &mut Node) {
    let one = matches!(n.value, kdissect::kafka::Value::Array(1));
    for c in n.children.iter_mut() {
        if one && c.kind == NodeKind::Length {
            c.desc = "one sample element follows".into();
        }
        sample_elements(c);
    }
}

/// Sections of the manual clap does not write: exit status and environment.
const MAN_EXIT_STATUS: &str = r#".SH "EXIT STATUS"
.TP
0
Every frame decoded cleanly (messages of APIs kdissect has no tables for do not count against
it).
.TP
1
Some frame was malformed, lost in a gap, or could not be decoded, or a capture could be read
only in part; everything is still shown as far as it goes.
.TP
2
Usage error, unreadable input, text that is not hex, or a write error other than a closed
pipe. A closed pipe (\fBkdissect cap.pcap | head\fR) ends the run quietly with 0.
.TP
130, 143
Interrupted by SIGINT or SIGTERM: what was decoded is written and the end-of-run notices are
printed first.
"#;

const MAN_ENVIRONMENT: &str = r#".SH ENVIRONMENT
.TP
NO_COLOR
When set and not empty, no colour (as \fB\-\-color never\fR) unless \fB\-\-color always\fR.
.TP
COLUMNS
Width the \fB\-\-stats\fR tables are fitted into on a terminal.
.TP
TZ
Time zone of the \fB\-t a\fR and \fB\-t ad\fR time columns.
.TP
TMPDIR
Where \fB\-w\fR keeps a copy of input read from a pipe or a live interface until it is written.
.TP
SSLKEYLOGFILE
With \fB\-\-keylog\-env\fR: a TLS key log read as \fB\-\-keylog\fR reads one.
"#;

/// The manual page: clap's sections, with exit status and environment before the version.
fn man_page(c: clap::Command) -> io::Result<Vec<u8>> {
    let man = clap_mangen::Man::new(c);
    let mut page = Vec::new();
    man.render_title(&mut page)?;
    man.render_name_section(&mut page)?;
    man.render_synopsis_section(&mut page)?;
    man.render_description_section(&mut page)?;
    man.render_options_section(&mut page)?;
    man.render_subcommands_section(&mut page)?;
    man.render_extra_section(&mut page)?;
    page.extend_from_slice(kdissect::filter::man_section().as_bytes());
    page.extend_from_slice(MAN_EXIT_STATUS.as_bytes());
    page.extend_from_slice(MAN_ENVIRONMENT.as_bytes());
    man.render_version_section(&mut page)?;
    Ok(page)
}

pub(crate) fn subcommand(cmd: &Commands) -> ExitCode {
    let mut c = Cli::command();
    let mut out = io::stdout();
    match cmd {
        Commands::Completions { shell } => {
            let sh = match shell {
                Shell::Bash => clap_complete::Shell::Bash,
                Shell::Zsh => clap_complete::Shell::Zsh,
                Shell::Fish => clap_complete::Shell::Fish,
            };
            // Into memory first: clap_complete panics when its output fails.
            let mut script = Vec::new();
            clap_complete::generate(sh, &mut c, "kdissect", &mut script);
            match out.write_all(&script).and_then(|()| out.flush()) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => write_failed(&e),
            }
        }
        Commands::Help { topic } => help(c, topic.as_deref()),
        Commands::Man => match man_page(c).and_then(|page| out.write_all(&page)) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => write_failed(&e),
        },
        Commands::Example {
            api,
            version,
            request,
            response,
            tree,
            bytes,
            print_hex,
            color,
        } => example(
            api,
            *version,
            *request,
            *response,
            Views {
                tree: *tree || !*bytes,
                bytes: *bytes || !*tree,
            },
            *print_hex,
            *color,
        ),
    }
}

/// `kdissect help [TOPIC]`: the filters' help, a subcommand's, or the whole program's.
fn help(mut c: clap::Command, topic: Option<&str>) -> ExitCode {
    let text = match topic {
        Some("filters" | "filter") => kdissect::filter::help_text(),
        None => c.render_long_help().to_string(),
        Some(t) => match c.find_subcommand_mut(t) {
            Some(sub) => sub.render_long_help().to_string(),
            None => {
                return fail(format!(
                    "no help on {t:?}: the topics are filters, completions, man, example"
                ))
            }
        },
    };
    let mut out = io::stdout();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => write_failed(&e),
    }
}

fn example(
    api: &str,
    version: Option<i16>,
    request: bool,
    response: bool,
    views: Views,
    print_hex: bool,
    color: ColorChoice,
) -> ExitCode {
    use kdissect::kafka::schema::registry;
    let Some(key) = names::api_key_from_str(api) else {
        return fail(crate::flags::not_an_api("example", api));
    };
    let reg = registry();
    let versions = reg.versions(key, Direction::Request);
    let Some(&newest) = versions.last() else {
        return fail(format!("API key {key} is not one kdissect has tables for"));
    };
    let v = version.unwrap_or(newest);
    if !versions.contains(&v) {
        let (lo, hi) = (versions.first().copied().unwrap_or(0), newest);
        return fail(format!(
            "{} has versions {lo}-{hi}, not {v}",
            kdissect::kafka::message::api_display_name(key)
        ));
    }
    let style = Style {
        color: match color {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                io::stdout().is_terminal()
                    && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
            }
        },
        ..Style::default()
    };
    let mut dirs = Vec::new();
    if !response {
        dirs.push(Direction::Request);
    }
    if !request {
        dirs.push(Direction::Response);
    }
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    for d in dirs {
        let Some(spec) = reg.get_for(key, d, v) else {
            continue;
        };
        let frame = kdissect::kafka::example::frame(spec, v);
        let mut msg = match d {
            Direction::Request => kdissect::kafka::decode_request(&frame),
            Direction::Response => kdissect::kafka::decode_response(&frame, key, v),
        };
        // An example's arrays hold a sample element, and the pages say so.
        if let Some(root) = msg.tree.as_deref_mut() {
            sample_elements(root);
        }
        let r = (|| -> io::Result<()> {
            if print_hex {
                writeln!(out, "{}", ::hex::encode(&frame))?;
            }
            titled::write(&mut out, &msg, &frame, 0, views, style)
        })();
        if let Err(e) = r {
            return write_failed(&e);
        }
    }
    match out.flush() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => write_failed(&e),
    }
}
