//! A user's test command (a Defects4J test run, a build tool's test goal), run once on a bug's
//! original file and once on each transformed file; the outcomes are compared.
//!
//! The command runs under `sh -c` in its own process group with these variables set:
//! `NATSTUDY_BUG` (the bug's id), `NATSTUDY_ITEM` (the transformation's id; empty for the
//! original), `NATSTUDY_FILE` (the file's path in its project, as imported) and
//! `NATSTUDY_SOURCE` (a file holding the whole program text to test: copy it over
//! `NATSTUDY_FILE` in a checkout, then run the tests). Its outcome is its exit status and what
//! it prints on standard output (up to 1 MiB): print the failing tests, not timings.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The command and how long one run may take.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestCommand {
    pub command: String,
    pub timeout: Duration,
}

/// The most characters of a test run's last line quoted in a message.
pub const LAST_LINE_CHARS: usize = 200;

/// What one run gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestOutcome {
    /// The exit status; `None` when it was killed (by the timeout or a signal).
    pub status: Option<i32>,
    pub stdout: String,
    pub timed_out: bool,
}

impl TestOutcome {
    /// A short description for messages: the exit status and the output's last line, cut to
    /// [`LAST_LINE_CHARS`] (the output may be a megabyte on one line).
    pub fn describe(&self) -> String {
        if self.timed_out {
            return "timed out".into();
        }
        let last = self.stdout.lines().rev().find(|l| !l.trim().is_empty());
        match (self.status, last) {
            (Some(s), Some(l)) => {
                let l = l.trim();
                let mut cut: String = l.chars().take(LAST_LINE_CHARS).collect();
                if cut.len() < l.len() {
                    cut.push('…');
                }
                format!("exit {s}, last line {cut:?}")
            }
            (Some(s), None) => format!("exit {s}"),
            (None, _) => "killed".into(),
        }
    }
}

/// One run's inputs.
#[derive(Debug, Clone, Copy)]
pub struct TestRun<'a> {
    pub bug: &'a str,
    pub item: Option<&'a str>,
    pub file_path: &'a str,
    pub source_file: &'a Path,
}

const STDOUT_LIMIT: u64 = 1 << 20;

impl TestCommand {
    pub fn run(&self, run: TestRun<'_>) -> std::io::Result<TestOutcome> {
        use std::os::unix::process::CommandExt;
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(&self.command)
            .env("NATSTUDY_BUG", run.bug)
            .env("NATSTUDY_ITEM", run.item.unwrap_or(""))
            .env("NATSTUDY_FILE", run.file_path)
            .env("NATSTUDY_SOURCE", run.source_file)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()?;
        let stdout = child.stdout.take();
        let reader = std::thread::spawn(move || {
            let mut text = Vec::new();
            if let Some(out) = stdout {
                let mut out = out.take(STDOUT_LIMIT);
                let _ = out.read_to_end(&mut text);
                // drain the rest so the command never blocks on a full pipe
                let _ = std::io::copy(&mut out.into_inner(), &mut std::io::sink());
            }
            String::from_utf8_lossy(&text).into_owned()
        });
        let started = Instant::now();
        let mut timed_out = false;
        let status = loop {
            if let Some(s) = child.try_wait()? {
                break s;
            }
            if started.elapsed() >= self.timeout {
                timed_out = true;
                // the whole group: the shell and whatever it started
                let _ = Command::new("kill")
                    .args(["-KILL", "--", &format!("-{}", child.id())])
                    .stderr(Stdio::null())
                    .status();
                let _ = child.kill();
                break child.wait()?;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let stdout = reader.join().unwrap_or_default();
        Ok(TestOutcome {
            status: status.code(),
            stdout,
            timed_out,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_last_line_is_cut_in_the_message() {
        let out = |stdout: String| TestOutcome {
            status: Some(1),
            stdout,
            timed_out: false,
        };
        let long = format!("ok\n{}\n\n", "é".repeat(1 << 19));
        let d = out(long).describe();
        assert!(
            d.chars().count() < LAST_LINE_CHARS + 40,
            "{} chars",
            d.len()
        );
        assert!(d.ends_with("…\""), "{d}");
        assert_eq!(
            out("a\nFAILED 2 tests \n".into()).describe(),
            "exit 1, last line \"FAILED 2 tests\""
        );
        assert_eq!(out(String::new()).describe(), "exit 1");
    }
}
