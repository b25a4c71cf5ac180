//! Calls into libraries that panic on hostile input. A model's files are input (uploaded
//! through the study page): the `tokenizers` crate panics on some `tokenizer.json` files and
//! candle's GGUF reader on a few crafted headers. Such a call runs under [`guard`]: a panic is
//! the file's error, not a dead job or command — and not a "thread … panicked" line on stderr
//! before that error: the process's panic hook, wrapped once, keeps quiet about a panic a
//! guard catches and reports every other panic as it did.

use std::any::Any;
use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Once;

use crate::{NlmError, NlmResult};

/// `f`'s value, or — when it panics — the error `failed` makes of the panic's message.
pub(crate) fn guard<T>(
    f: impl FnOnce() -> T,
    failed: impl FnOnce(&str) -> NlmError,
) -> NlmResult<T> {
    quiet_when_guarded();
    let outer = GUARDED.replace(true);
    let out = catch_unwind(AssertUnwindSafe(f));
    GUARDED.set(outer);
    out.map_err(|panic| failed(message(panic.as_ref())))
}

/// A panic's message: the text it was given, or "no message" for any other payload.
fn message(payload: &(dyn Any + Send)) -> &str {
    payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied())
        .unwrap_or("no message")
}

thread_local! {
    /// Whether this thread runs a guarded call (a panic here becomes the guard's error).
    static GUARDED: Cell<bool> = const { Cell::new(false) };
}

/// Wraps the process's panic hook, once, in one that says nothing of a panic in a guarded
/// call (its message is in the error the guard returns) and hands every other panic to the
/// hook that was there. A hook set later replaces this one; guarded panics are then reported
/// twice, as before, and nothing else changes.
fn quiet_when_guarded() {
    static WRAPPED: Once = Once::new();
    WRAPPED.call_once(|| {
        let report = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !GUARDED.get() {
                report(info)
            }
        }));
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_is_the_callers_error_with_its_message() {
        let e = guard(
            || -> u8 { panic!("at {} of {}", 3, 4) },
            |why| NlmError::Model(format!("f.gguf: {why}")),
        );
        assert_eq!(
            e.err().map(|e| e.to_string()).as_deref(),
            Some("f.gguf: at 3 of 4")
        );
        let e = guard(
            || -> u8 { std::panic::panic_any(7u8) },
            |why| NlmError::Model(why.to_owned()),
        );
        assert_eq!(
            e.err().map(|e| e.to_string()).as_deref(),
            Some("no message")
        );
        assert_eq!(guard(|| 5, |_| unreachable!()).ok(), Some(5));
        assert!(!GUARDED.get(), "the flag is put back");
    }
}
