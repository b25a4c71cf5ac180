//! Thread priorities: the threads of the `natstudy` command's runtime (requests, and the CPU
//! work they hand to `spawn_blocking`) run [`REQUEST_NICE`] steps below the process; the
//! thread of SQLite's write connection keeps the process's priority.
//!
//! Every claim and vote of a SQLite database is committed through one connection, whose
//! statements sqlx runs on a thread of its own, one after the other: the survey's throughput
//! is that thread's. Under load, with both cores busy, it waited for a core behind the request
//! handlers — a third of its time waiting to run (`/proc/…/schedstat`: 667 ms waiting against
//! 1,362 ms running over 3 s of `bench http --think 0`) — while every participant waited for
//! it. The request handlers can wait instead: they are many, and each waits for the writer
//! anyway. `bench http --think 0 --items 8000` on SQLite, the runtime's threads lowered from
//! outside (`renice`), alternating: 2,905–3,019 votes/s with every thread equal, 2,939–3,009
//! two steps down, 3,202–3,465 five, 3,807–3,989 ten to nineteen. As built, against the build
//! before: 2,744–3,009 → 3,655–3,958 votes/s, and with 10 s of think time the start-up burst's
//! p99 of every request 89–106 → 35 ms. PostgreSQL's throughput is its server's: 1,669–1,758
//! → 1,768–1,880 votes/s.
//!
//! Linux gives each thread its own nice value and a new thread its creator's, and a thread
//! cannot raise its own again. So what must keep the process's priority is made by threads
//! that have it:
//! - SQLite's write connection is opened by `Db::connect` on the command's main thread before
//!   any request, and kept for the life of the process (no idle or age limit on it);
//! - PostgreSQL's writer thread is started by a thread kept for that at the start
//!   ([`keep_base_spawner`], [`spawn_at_base`]).
//!
//! A thread made later by a runtime thread (a read connection, a rayon pool) runs at the
//! runtime's. Elsewhere than on Linux nothing changes. `natstudy --request-nice N` (or
//! `NATSTUDY_REQUEST_NICE`) sets the steps, 0 to 19; 0 runs every thread at the process's
//! priority (on a machine shared with services the requests should not yield to).

/// How many nice steps below the process the runtime's threads run by default (`natstudy
/// --request-nice`; the result is capped at 19, the lowest).
pub const REQUEST_NICE: i32 = 10;

/// The steps in force ([`set_request_nice`]).
static OFFSET: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(REQUEST_NICE);

/// Sets how many nice steps below the process the runtime's threads run (0 to 19; 0 runs them
/// at the process's priority): before the runtime starts.
pub fn set_request_nice(steps: i32) {
    OFFSET.store(steps.clamp(0, 19), std::sync::atomic::Ordering::Relaxed);
}

/// The steps in force.
pub fn request_nice() -> i32 {
    OFFSET.load(std::sync::atomic::Ordering::Relaxed)
}

/// Sets the calling thread [`request_nice`] steps below the process's main thread: for the
/// runtime's `on_thread_start`. A thread that a runtime thread made starts there already (its
/// creator's value) and is not lowered twice. Best effort: a system that refuses leaves the
/// thread as it was.
pub fn lower_current_thread() {
    #[cfg(target_os = "linux")]
    {
        use rustix::process::{getpid, getpriority_process, setpriority_process};
        // the main thread's id is the process's
        let Ok(base) = getpriority_process(Some(getpid())) else {
            return;
        };
        let tid = rustix::thread::gettid();
        let target = (base + request_nice()).min(19);
        if getpriority_process(Some(tid)).is_ok_and(|now| now < target) {
            let _ = setpriority_process(Some(tid), target);
        }
    }
}

/// A thread to run at the process's priority whoever asks for it: its closure and name.
type Start = (String, Box<dyn FnOnce() + Send>);

/// The thread that starts threads at the process's priority ([`keep_base_spawner`]).
static SPAWNER: std::sync::OnceLock<std::sync::mpsc::Sender<Start>> = std::sync::OnceLock::new();

/// Starts, on the calling thread's priority (the command's main thread, before the runtime),
/// the thread that [`spawn_at_base`] asks to start threads: a thread takes its creator's
/// priority, and the runtime's threads cannot raise theirs again.
pub fn keep_base_spawner() {
    let (tx, rx) = std::sync::mpsc::channel::<Start>();
    let started = std::thread::Builder::new()
        .name("natstudy-spawner".into())
        .spawn(move || {
            for (name, f) in rx {
                if let Err(e) = std::thread::Builder::new().name(name.clone()).spawn(f) {
                    tracing::warn!(error = %e, thread = name, "cannot start a thread");
                }
            }
        });
    if started.is_ok() {
        let _ = SPAWNER.set(tx);
    }
}

/// Starts a thread named `name` running `f` at the process's priority: through the spawner
/// thread when [`keep_base_spawner`] started one, else (tests, other users of the library,
/// where nothing is lowered) from the calling thread. Returns whether it was started (or
/// handed to the spawner, which logs a failure).
pub fn spawn_at_base(name: &str, f: impl FnOnce() + Send + 'static) -> bool {
    if let Some(tx) = SPAWNER.get() {
        return tx.send((name.to_owned(), Box::new(f))).is_ok();
    }
    std::thread::Builder::new()
        .name(name.to_owned())
        .spawn(f)
        .is_ok()
}

/// The calling thread's nice value (Linux; 0 elsewhere).
pub fn current_nice() -> i32 {
    #[cfg(target_os = "linux")]
    {
        rustix::process::getpriority_process(Some(rustix::thread::gettid())).unwrap_or(0)
    }
    #[cfg(not(target_os = "linux"))]
    {
        0
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// A thread started through the spawner has the priority of the thread that started the
    /// spawner, whoever asked; and its name. (The spawner is the process's: this test is the
    /// only one of this binary that starts it.)
    #[test]
    fn the_spawner_starts_threads_at_its_own_priority() {
        let before = current_nice();
        keep_base_spawner();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            lower_current_thread();
            assert!(spawn_at_base("natstudy-probe", move || {
                let name = std::thread::current().name().map(str::to_owned);
                let _ = tx.send((name, current_nice()));
            }));
        })
        .join()
        .expect("lowered thread");
        let got = rx
            .recv_timeout(std::time::Duration::from_secs(10))
            .expect("the thread ran");
        assert_eq!(got, (Some("natstudy-probe".to_owned()), before));
    }

    /// Only the calling thread is lowered: neither the thread that made it nor its sibling.
    #[test]
    fn only_the_calling_thread_is_lowered() {
        let before = current_nice();
        let lowered = std::thread::spawn(|| {
            let was = current_nice();
            lower_current_thread();
            (was, current_nice())
        })
        .join()
        .expect("thread");
        assert_eq!(lowered, (before, (before + REQUEST_NICE).min(19)));
        assert_eq!(current_nice(), before);
        let sibling = std::thread::spawn(current_nice).join().expect("thread");
        assert_eq!(sibling, before);
    }

    /// A thread made by a lowered thread starts lowered (why the write connection is opened
    /// before the runtime's threads make any), and lowering it again leaves it there (a
    /// blocking-pool thread that a runtime thread made).
    #[test]
    fn a_new_thread_takes_its_creators_priority_once() {
        let before = current_nice();
        let child = std::thread::spawn(|| {
            lower_current_thread();
            std::thread::spawn(|| {
                let was = current_nice();
                lower_current_thread();
                (was, current_nice())
            })
            .join()
            .expect("grandchild")
        })
        .join()
        .expect("thread");
        let lowered = (before + REQUEST_NICE).min(19);
        assert_eq!(child, (lowered, lowered));
    }
}
