//! Trivial compiler equivalence: the patched and the fixed program compiled with javac without
//! debug information (`-g:none`) give byte-identical class files.

use std::path::{Path, PathBuf};
use std::process::Command;

/// How to call javac.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Javac {
    pub program: PathBuf,
    /// `-cp` for the target's project (its dependencies and the rest of its classes).
    pub classpath: Option<String>,
}

impl Default for Javac {
    fn default() -> Javac {
        Javac {
            program: PathBuf::from("javac"),
            classpath: None,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum TceError {
    #[error("javac could not be started ({program}): {source}")]
    NoJavac {
        program: String,
        source: std::io::Error,
    },
    #[error("the {which} program does not compile: {message}")]
    DoesNotCompile {
        which: &'static str,
        message: String,
    },
    #[error("temporary files: {0}")]
    Io(#[from] std::io::Error),
}

/// Where a target's method sits: its whole file and the file's name (`Foo.java`), so the
/// method is compiled in its class with its fields and imports. Without it the method is
/// compiled alone inside a stub class, which works for self-contained methods only.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    pub file_name: &'a str,
    pub file_source: &'a str,
    /// The target's method as it appears in `file_source`.
    pub method: &'a str,
}

/// The compilation unit with `method` in place of the target's method, and its file name.
fn program(context: Option<Context<'_>>, method: &str) -> (String, String) {
    if let Some(c) = context {
        if let Some(out) = crate::verify::place(c.file_source, c.method, method) {
            let name = Path::new(c.file_name)
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or("Target.java")
                .to_owned();
            return (out, name);
        }
    }
    (
        format!("class TceTarget {{\n{method}\n}}\n"),
        "TceTarget.java".to_owned(),
    )
}

/// Compiles one program into `out`; the class files by relative path, sorted.
fn compile(
    javac: &Javac,
    dir: &Path,
    which: &'static str,
    (source, name): (String, String),
) -> Result<Vec<(PathBuf, Vec<u8>)>, TceError> {
    let src_dir = dir.join(which).join("src");
    let out_dir = dir.join(which).join("classes");
    std::fs::create_dir_all(&src_dir)?;
    std::fs::create_dir_all(&out_dir)?;
    let file = src_dir.join(name);
    std::fs::write(&file, source)?;
    let mut cmd = Command::new(&javac.program);
    cmd.args([
        "-g:none",
        "-proc:none",
        "-nowarn",
        "-encoding",
        "UTF-8",
        "-d",
    ])
    .arg(&out_dir)
    .arg("-implicit:none");
    if let Some(cp) = &javac.classpath {
        cmd.arg("-cp").arg(cp);
    }
    let output = cmd
        .arg(&file)
        .output()
        .map_err(|source| TceError::NoJavac {
            program: javac.program.display().to_string(),
            source,
        })?;
    if !output.status.success() {
        let message = String::from_utf8_lossy(&output.stderr);
        let message: String = message.lines().take(5).collect::<Vec<_>>().join(" / ");
        return Err(TceError::DoesNotCompile { which, message });
    }
    let mut classes = Vec::new();
    let mut stack = vec![out_dir.clone()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d)? {
            let path = entry?.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let rel = path.strip_prefix(&out_dir).unwrap_or(&path).to_path_buf();
                classes.push((rel, std::fs::read(&path)?));
            }
        }
    }
    classes.sort();
    Ok(classes)
}

/// Whether the patched and the fixed method compile to identical class files in their context.
pub fn equivalent(
    javac: &Javac,
    context: Option<Context<'_>>,
    patched: &str,
    fixed: &str,
) -> Result<bool, TceError> {
    let dir = tempfile::tempdir()?;
    let a = compile(javac, dir.path(), "patched", program(context, patched))?;
    let b = compile(javac, dir.path(), "fixed", program(context, fixed))?;
    Ok(!a.is_empty() && a == b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn have_javac() -> bool {
        Command::new("javac")
            .arg("-version")
            .output()
            .is_ok_and(|o| o.status.success())
    }

    #[test]
    fn differently_written_equivalent_methods_compile_alike() {
        if !have_javac() {
            eprintln!("skipped: no javac");
            return;
        }
        let javac = Javac::default();
        let fixed = "int count(int[] xs, int limit) {\n    int n = 0;\n    for (int i = 0; i < xs.length; i++) {\n        if (xs[i] >= limit) {\n            n++;\n        }\n    }\n    return n;\n}";
        let patched = "int count(int[] xs, int limit) {\n    int n = 0; // matches\n    for (int i = 0; i < xs.length; ++i)\n        if (!(xs[i] < limit)) n += 1;\n    return (n);\n}";
        assert!(equivalent(&javac, None, patched, fixed).expect("compiles"));
        let different = patched.replace("n += 1", "n += 2");
        assert!(!equivalent(&javac, None, &different, fixed).expect("compiles"));
        let broken = patched.replace("return (n);", "return m;");
        assert!(matches!(
            equivalent(&javac, None, &broken, fixed),
            Err(TceError::DoesNotCompile {
                which: "patched",
                ..
            })
        ));
        // in its file: the method sees the class's field
        let file = "package p;\n\npublic class Counter {\n    private int limit = 3;\n\n    int over(int x) {\n        return x - limit;\n    }\n}\n";
        let method = "    int over(int x) {\n        return x - limit;\n    }";
        let context = Context {
            file_name: "src/p/Counter.java",
            file_source: file,
            method,
        };
        let fixed = "    int over(int x) {\n        return x > limit ? x - limit : 0;\n    }";
        let patched =
            "    int over(int x) {\n        return (x > this.limit) ? (x - this.limit) : 0;\n    }";
        assert!(equivalent(&javac, Some(context), patched, fixed).expect("compiles"));
        let missing = Javac {
            program: PathBuf::from("/nonexistent/javac"),
            classpath: None,
        };
        assert!(matches!(
            equivalent(&missing, None, patched, fixed),
            Err(TceError::NoJavac { .. })
        ));
    }
}
