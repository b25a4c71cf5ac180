//! A long-lived javac: one JVM (`NatstudyCompile.java`, run by the JDK's single-file source
//! launcher) compiles file after file through `javax.tools`, so a compilation costs
//! milliseconds instead of a JVM start. A compilation that runs past its deadline kills the
//! process; the next one starts a fresh JVM.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::Duration;

const HELPER: &str = include_str!("NatstudyCompile.java");

/// How to compile: which JDK and what the compiled file may refer to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompilerConfig {
    /// The `java` launcher of a JDK (11 or later); its own javac compiles.
    pub java: PathBuf,
    /// `-classpath`: the project's classes and dependencies.
    pub classpath: Option<String>,
    /// `-sourcepath`: the project's sources, compiled on demand when the file refers to them.
    pub sourcepath: Option<String>,
    /// The longest one compilation may take.
    pub timeout: Duration,
}

impl Default for CompilerConfig {
    fn default() -> CompilerConfig {
        CompilerConfig {
            java: PathBuf::from("java"),
            classpath: None,
            sourcepath: None,
            timeout: Duration::from_secs(120),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum CompilerError {
    #[error("the Java compiler could not be started ({java}): {reason}")]
    NoCompiler { java: String, reason: String },
    #[error("{0} may not contain tabs or line breaks")]
    BadOption(&'static str),
    #[error("compiling took longer than {0:?}")]
    Timeout(Duration),
    #[error("the compiler stopped: {0}")]
    Stopped(String),
    #[error("temporary files: {0}")]
    Io(#[from] std::io::Error),
}

/// What javac said about one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compiled {
    pub ok: bool,
    /// The errors, one line (`line N: message / …`); empty when it compiled.
    pub message: String,
}

struct Process {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One compiler process and its scratch directory.
pub struct Compiler {
    config: CompilerConfig,
    dir: tempfile::TempDir,
    process: Option<Process>,
    jobs: u64,
}

impl std::fmt::Debug for Compiler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Compiler")
            .field("config", &self.config)
            .field("jobs", &self.jobs)
            .finish()
    }
}

fn clean(option: &Option<String>, what: &'static str) -> Result<(), CompilerError> {
    match option {
        Some(s) if s.contains(['\t', '\n', '\r']) => Err(CompilerError::BadOption(what)),
        _ => Ok(()),
    }
}

impl Compiler {
    /// Starts the compiler (a JVM start, about a second); fails when there is no JDK.
    pub fn start(config: CompilerConfig) -> Result<Compiler, CompilerError> {
        clean(&config.classpath, "the classpath")?;
        clean(&config.sourcepath, "the sourcepath")?;
        let dir = tempfile::tempdir()?;
        std::fs::write(dir.path().join("NatstudyCompile.java"), HELPER)?;
        let mut c = Compiler {
            config,
            dir,
            process: None,
            jobs: 0,
        };
        c.spawn()?;
        Ok(c)
    }

    fn spawn(&mut self) -> Result<(), CompilerError> {
        let no = |reason: String| CompilerError::NoCompiler {
            java: self.config.java.display().to_string(),
            reason,
        };
        let mut child = Command::new(&self.config.java)
            .arg("-XX:+UseSerialGC")
            .arg(self.dir.path().join("NatstudyCompile.java"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| no(e.to_string()))?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            let _ = child.kill();
            return Err(no("no pipes".into()));
        };
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let process = Process {
            child,
            stdin,
            lines,
        };
        match process.lines.recv_timeout(Duration::from_secs(120)) {
            Ok(l) if l == "ready" => {}
            Ok(l) if l == "nocompiler" => {
                return Err(no("a Java runtime without javac (install a JDK)".into()))
            }
            Ok(l) => return Err(no(format!("unexpected answer {l:?}"))),
            Err(_) => return Err(no("it did not start (is this a JDK 11 or later?)".into())),
        }
        self.process = Some(process);
        Ok(())
    }

    /// Compiles `source` as a file named `file_name` (`Foo.java`: javac wants a public class
    /// in a file of its name), with `options` added to the configured ones; `{src}` in an
    /// option stands for the folder the file is written to (`--patch-module
    /// java.base={src}` compiles a file of the JDK's own module).
    pub fn compile(
        &mut self,
        file_name: &str,
        source: &str,
        options: &[String],
    ) -> Result<Compiled, CompilerError> {
        if options.iter().any(|o| o.contains(['\t', '\n', '\r'])) {
            return Err(CompilerError::BadOption("an option"));
        }
        self.jobs += 1;
        let job = self.dir.path().join(format!("j{}", self.jobs % 2));
        let _ = std::fs::remove_dir_all(&job);
        let src = job.join("src");
        let classes = job.join("classes");
        std::fs::create_dir_all(&src)?;
        std::fs::create_dir_all(&classes)?;
        let name = Path::new(file_name)
            .file_name()
            .and_then(|n| n.to_str())
            .filter(|n| n.ends_with(".java") && !n.contains(['\t', '\n', '\r']))
            .unwrap_or("Unit.java");
        let file = src.join(name);
        std::fs::write(&file, source)?;
        let mut line = format!("{}\t{}", file.display(), classes.display());
        let configured = [
            ("-classpath", &self.config.classpath),
            ("-sourcepath", &self.config.sourcepath),
        ];
        for (flag, value) in configured {
            if let Some(v) = value {
                line.push('\t');
                line.push_str(flag);
                line.push('\t');
                line.push_str(v);
            }
        }
        let src_text = src.display().to_string();
        for o in options {
            line.push('\t');
            line.push_str(&o.replace("{src}", &src_text));
        }
        line.push('\n');
        if self.process.is_none() {
            self.spawn()?;
        }
        let Some(p) = self.process.as_mut() else {
            return Err(CompilerError::Stopped("not running".into()));
        };
        if let Err(e) = p
            .stdin
            .write_all(line.as_bytes())
            .and_then(|_| p.stdin.flush())
        {
            self.process = None;
            return Err(CompilerError::Stopped(e.to_string()));
        }
        let answer = match p.lines.recv_timeout(self.config.timeout) {
            Ok(a) => a,
            Err(RecvTimeoutError::Timeout) => {
                self.process = None;
                return Err(CompilerError::Timeout(self.config.timeout));
            }
            Err(RecvTimeoutError::Disconnected) => {
                self.process = None;
                return Err(CompilerError::Stopped("it exited".into()));
            }
        };
        let (verdict, message) = answer.split_once('\t').unwrap_or((answer.as_str(), ""));
        Ok(Compiled {
            ok: verdict == "ok",
            message: message.to_owned(),
        })
    }
}
