//! `natstudy … | head`: a command whose reader went away ends quietly — exit 0, nothing on
//! stderr — whether it wrote with `println!` (which panics on a closed pipe unless caught) or
//! through a writer whose error comes back (an export to standard output).

use std::process::{Command, Stdio};

use natstudy_tests::{natstudy_bin, reference_dir};

/// Runs natstudy with its standard output a pipe whose reading end is closed at once (before
/// the command, which first opens and migrates its database, writes anything); returns the
/// exit status and what it wrote to stderr.
fn with_reader_gone(data: &std::path::Path, args: &[&str]) -> (std::process::ExitStatus, String) {
    let mut child = Command::new(natstudy_bin().expect("binary"))
        .arg("--data-dir")
        .arg(data)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("wait");
    (
        out.status,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn run(data: &std::path::Path, args: &[&str]) {
    let status = Command::new(natstudy_bin().expect("binary"))
        .arg("--data-dir")
        .arg(data)
        .args(args)
        .stdout(Stdio::null())
        .status()
        .expect("run");
    assert!(status.success(), "natstudy {args:?}");
}

#[test]
fn a_closed_pipe_ends_a_command_quietly() {
    let tmp = tempfile::tempdir().expect("tmp");
    let data = tmp.path();
    let r = reference_dir().join("study-small");
    let p = |f: &str| r.join(f).display().to_string();
    run(data, &["study", "create", "ref"]);
    // println! to the closed pipe: "imported … rows"
    let (status, stderr) = with_reader_gone(
        data,
        &[
            "import",
            "items",
            "--study",
            "ref",
            &p("bugs.jsonl"),
            &p("transformations.jsonl"),
        ],
    );
    assert!(status.success(), "{status}: {stderr}");
    assert!(
        !stderr.contains("panicked") && stderr.trim().is_empty(),
        "{stderr}"
    );
    run(
        data,
        &["import", "votes", "--study", "ref", &p("survey.json")],
    );
    // an export streamed to the closed pipe: its write error comes back to the command
    let (status, stderr) = with_reader_gone(data, &["export", "--study", "ref", "--what", "votes"]);
    assert!(status.success(), "{status}: {stderr}");
    assert!(stderr.trim().is_empty(), "{stderr}");
    // and a real error is still one
    let (status, stderr) =
        with_reader_gone(data, &["export", "--study", "nope", "--what", "votes"]);
    assert!(!status.success());
    assert!(stderr.contains("error"), "{stderr}");
}
