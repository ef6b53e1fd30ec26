//! SASL: SaslAuthenticate's AuthBytes split into the mechanism's parts, and secrets masked in
//! every view unless --show-secrets.

use std::io::Write;
use std::process::{Command, Stdio};

/// A flexible request frame: header v2 (client_id "t"), then the body.
fn request(key: i16, version: i16, corr: i32, body: &[u8]) -> Vec<u8> {
    let mut f = Vec::new();
    f.extend_from_slice(&key.to_be_bytes());
    f.extend_from_slice(&version.to_be_bytes());
    f.extend_from_slice(&corr.to_be_bytes());
    f.extend_from_slice(&[0, 1, b't', 0]);
    f.extend_from_slice(body);
    let mut out = (f.len() as i32).to_be_bytes().to_vec();
    out.extend(f);
    out
}

/// SaslAuthenticate v2 request body: compact bytes, no tagged fields.
fn authenticate(auth: &[u8]) -> Vec<u8> {
    let mut b = vec![(auth.len() + 1) as u8];
    b.extend_from_slice(auth);
    b.push(0);
    request(36, 2, 3, &b)
}

fn run(args: &[&str], frame: &[u8]) -> (Option<i32>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kdissect"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(hex::encode(frame).as_bytes())
        .expect("write");
    let out = child.wait_with_output().expect("wait");
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    (out.status.code(), text)
}

const PASSWORD: &str = "alice-secret";

/// Every view a user could paste into a ticket.
const VIEWS: &[&[&str]] = &[
    &["--hex"],
    &["--hex", "-V"],
    &["--hex", "-x"],
    &["--hex", "--json"],
    &["--hex", "--json", "--json-spans"],
    &["--hex", "-V", "--wide"],
];

fn leaks(text: &str, secret: &str) -> bool {
    text.contains(secret) || text.contains(&hex::encode(secret))
}

#[test]
fn plain_password_is_masked_in_every_view() {
    let f = authenticate(format!("\0alice\0{PASSWORD}").as_bytes());
    for view in VIEWS {
        let (code, out) = run(view, &f);
        assert_eq!(code, Some(0), "{view:?}: {out}");
        assert!(
            !leaks(&out, PASSWORD),
            "{view:?} leaks the password:\n{out}"
        );
    }
    let (_, tree) = run(&["--hex", "-V"], &f);
    assert!(tree.contains(r#"authcid varbytes = "alice""#), "{tree}");
    assert!(
        tree.contains(r#"passwd varbytes = "************""#),
        "{tree}"
    );
    let (_, layout) = run(&["--hex", "-x"], &f);
    assert!(layout.contains("** ** ** **"), "{layout}");
    let (_, json) = run(&["--hex", "--json"], &f);
    let v: serde_json::Value = serde_json::from_str(json.trim()).expect("json");
    assert_eq!(v["body"]["AuthBytes"]["authcid"], "alice");
    assert_eq!(v["body"]["AuthBytes"]["passwd"], "************");
}

#[test]
fn show_secrets_reveals_them() {
    let f = authenticate(format!("\0alice\0{PASSWORD}").as_bytes());
    let (_, json) = run(&["--hex", "--json", "--show-secrets"], &f);
    let v: serde_json::Value = serde_json::from_str(json.trim()).expect("json");
    assert_eq!(v["body"]["AuthBytes"]["passwd"], PASSWORD);
    let (_, layout) = run(&["--hex", "-x", "--show-secrets"], &f);
    assert!(!layout.contains("**"), "{layout}");
}

#[test]
fn scram_steps_are_split_and_the_proof_masked() {
    let proof = "dHpiMnR6YjJ0emIydHpiMg==";
    let cases = [
        (
            "n,,n=bob,r=fyko+d2lbbFgONRv9qkxdawL".to_string(),
            vec![("username", "bob"), ("nonce", "fyko+d2lbbFgONRv9qkxdawL")],
        ),
        (
            "r=fyko+d2lbbFgONRv9qkxdawLsrv,s=QSXCR+Q6sek8bf92,i=4096".to_string(),
            vec![("salt", "QSXCR+Q6sek8bf92"), ("iterations", "4096")],
        ),
        (
            format!("c=biws,r=fyko+d2lbbFgONRv9qkxdawLsrv,p={proof}"),
            vec![("channel_binding", "biws")],
        ),
    ];
    for (auth, want) in cases {
        let f = authenticate(auth.as_bytes());
        let (code, json) = run(&["--hex", "--json"], &f);
        assert_eq!(code, Some(0), "{json}");
        let v: serde_json::Value = serde_json::from_str(json.trim()).expect("json");
        for (k, val) in want {
            assert_eq!(v["body"]["AuthBytes"][k], val, "{auth}: {k}");
        }
        assert!(!json.contains(proof), "{json}");
    }
    let (_, line) = run(&["--hex", "--json"], &authenticate(b"n,,n=bob,r=abc"));
    assert!(line.contains(r#""username":"bob""#), "{line}");
}

#[test]
fn oauthbearer_token_is_masked() {
    let token = "eyJhbGciOiJub25lIn0.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJl";
    let f = authenticate(format!("n,,\x01auth=Bearer {token}\x01\x01").as_bytes());
    for view in VIEWS {
        let (_, out) = run(view, &f);
        assert!(!leaks(&out, token), "{view:?} leaks the token:\n{out}");
    }
    let (_, tree) = run(&["--hex", "-V", "--wide"], &f);
    assert!(tree.contains("Bearer ***"), "{tree}");
}

#[test]
fn a_damaged_authenticate_frame_masks_what_it_could_not_decode() {
    // The AuthBytes length claims more than the frame holds: decoding stops before the
    // password is split out, and the raw rest must not show it.
    let mut auth = vec![0x7f];
    auth.extend_from_slice(format!("\0alice\0{PASSWORD}").as_bytes());
    let f = request(36, 2, 3, &auth);
    for view in VIEWS {
        let (code, out) = run(view, &f);
        assert_eq!(code, Some(1), "{view:?}: {out}");
        assert!(
            !leaks(&out, PASSWORD),
            "{view:?} leaks the password:\n{out}"
        );
    }
}

#[test]
fn delegation_token_hmac_is_masked() {
    // ExpireDelegationToken v2 (flexible): Hmac compact bytes, ExpiryTimePeriodMs, tags.
    let hmac = b"hmac-of-the-token-1234";
    let mut body = vec![(hmac.len() + 1) as u8];
    body.extend_from_slice(hmac);
    body.extend_from_slice(&(-1i64).to_be_bytes());
    body.push(0);
    let f = request(40, 2, 9, &body);
    for view in VIEWS {
        let (code, out) = run(view, &f);
        assert_eq!(code, Some(0), "{view:?}: {out}");
        assert!(
            !leaks(&out, "hmac-of-the-token"),
            "{view:?} leaks the HMAC:\n{out}"
        );
    }
}
