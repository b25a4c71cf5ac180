//! CPU time as Linux accounts it in `/proc`, for the benchmarks' "CPU per vote": this process
//! (every thread, the server and the load client alike), the PostgreSQL processes on this
//! machine (a local database's backends and its background writers), and the machine's busy
//! and idle time. Elsewhere (another OS, no `/proc`) there is no sample and nothing is printed.

/// `/proc`'s clock tick (`USER_HZ`): 100 on every Linux architecture, whatever the kernel's own
/// timer frequency.
const TICKS_PER_S: f64 = 100.0;

/// CPU seconds used up to one moment.
#[derive(Debug, Clone, Copy)]
pub struct CpuSample {
    own: f64,
    postgres: f64,
    busy: f64,
    all: f64,
}

/// What the CPU did between two samples.
#[derive(Debug, Clone, Copy)]
pub struct CpuUsed {
    /// Seconds of this process.
    pub own: f64,
    /// Seconds of PostgreSQL's processes on this machine (0: none here).
    pub postgres: f64,
    /// Share of the machine's CPU time that was idle.
    pub idle: f64,
}

/// User + system ticks of a `/proc/<pid>/stat` line, and its command name. The name is in
/// parentheses and may hold anything; the fields are counted from the last `)`.
fn ticks_of(stat: &str) -> Option<(&str, u64)> {
    let open = stat.find('(')?;
    let close = stat.rfind(')')?;
    let comm = stat.get(open + 1..close)?;
    let mut fields = stat.get(close + 1..)?.split_whitespace();
    // after the name: state, ppid, pgrp, session, tty, tpgid, flags, 4 fault counts, utime, stime
    let utime: u64 = fields.nth(11)?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some((comm, utime + stime))
}

/// The machine's busy and total ticks, from the `cpu` line of `/proc/stat`.
fn machine(stat: &str) -> Option<(u64, u64)> {
    let line = stat.lines().find(|l| l.starts_with("cpu "))?;
    let v: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .map(|f| f.parse().ok())
        .collect::<Option<_>>()?;
    // user nice system idle iowait irq softirq steal (guest time is within user)
    let all: u64 = v.iter().take(8).sum();
    let idle = v.get(3)? + v.get(4).copied().unwrap_or(0);
    Some((all - idle, all))
}

/// The CPU time used so far, or `None` without `/proc`; PostgreSQL's processes only when
/// `postgres` (a run on SQLite leaves out a server that merely runs beside it).
pub fn sample(postgres: bool) -> Option<CpuSample> {
    let (_, own) = ticks_of(&std::fs::read_to_string("/proc/self/stat").ok()?)?;
    let (busy, all) = machine(&std::fs::read_to_string("/proc/stat").ok()?)?;
    let mut ticks = 0;
    let processes = match postgres {
        true => std::fs::read_dir("/proc").ok()?.flatten().collect(),
        false => Vec::new(),
    };
    for entry in processes {
        let name = entry.file_name();
        if !name.to_string_lossy().bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        // a process may end between the listing and the read
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        if let Some(("postgres", t)) = ticks_of(&stat) {
            ticks += t;
        }
    }
    let s = |t: u64| t as f64 / TICKS_PER_S;
    Some(CpuSample {
        own: s(own),
        postgres: s(ticks),
        busy: s(busy),
        all: s(all),
    })
}

impl CpuSample {
    /// What was used from `self` to `later` (PostgreSQL processes that ended meanwhile are not
    /// counted: never less than zero).
    pub fn until(&self, later: &CpuSample) -> CpuUsed {
        let all = (later.all - self.all).max(f64::MIN_POSITIVE);
        CpuUsed {
            own: (later.own - self.own).max(0.0),
            postgres: (later.postgres - self.postgres).max(0.0),
            idle: (1.0 - (later.busy - self.busy) / all).clamp(0.0, 1.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_count_from_the_last_parenthesis() {
        let line = "4242 (post gres) x) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 1 0";
        assert_eq!(ticks_of(line), Some(("post gres) x", 300)));
        assert_eq!(ticks_of("12 (postgres) S 1"), None);
        let stat = "cpu  100 5 50 800 20 1 2 3 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\n";
        assert_eq!(machine(stat), Some((161, 981)));
    }

    #[test]
    fn this_process_is_sampled() {
        let Some(a) = sample(false) else {
            return; // no /proc here
        };
        let mut x = 0u64;
        let t = std::time::Instant::now();
        while t.elapsed() < std::time::Duration::from_millis(60) {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        let b = sample(false).expect("a second sample");
        let used = a.until(&b);
        assert!(used.own >= 0.02, "{used:?}");
        assert!((0.0..=1.0).contains(&used.idle));
        assert_eq!(used.postgres, 0.0, "not asked for");
    }
}
