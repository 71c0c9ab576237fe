//! The lease on a task (docs/fleets.md): who holds it and until when,
//! as the message of a commit under `refs/retry-run/<task>/lease` on the
//! remote. Pure: the message's format and what a lease found there means.

use serde::{Deserialize, Serialize};

/// The first line of a lease commit's message.
const TITLE: &str = "retry-run lease";

/// Who holds a task's lease, and until when (milliseconds since the epoch).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Holder {
    pub host: String,
    pub pid: u32,
    /// One per `retry-run run`: tells a run its own lease from another's.
    pub run: String,
    pub task: String,
    pub until_ms: u64,
    /// Given back at the end of a run: free for anyone.
    #[serde(default)]
    pub released: bool,
}

impl Holder {
    /// The lease commit's message.
    pub(crate) fn message(&self) -> String {
        let json = serde_json::to_string(self).unwrap_or_default();
        let what = if self.released { "released" } else { "held" };
        format!("{TITLE}: {} {what} by {} (pid {})\n\n{json}\n", self.task, self.host, self.pid)
    }

    /// Reads a lease commit's message; `None` when it is not one.
    pub(crate) fn parse(message: &str) -> Option<Holder> {
        if !message.starts_with(TITLE) {
            return None;
        }
        message.lines().find(|l| l.starts_with('{')).and_then(|l| serde_json::from_str(l).ok())
    }

    /// `host` pid `pid` until `time`.
    pub(crate) fn describe(&self, now_ms: u64) -> String {
        let left = self.until_ms.saturating_sub(now_ms);
        format!("{} (pid {}, run {}), lease for {:.1} s more", self.host, self.pid, self.run, left as f64 / 1000.0)
    }
}

/// What the lease found on the remote means for a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum LeaseStanding {
    /// No lease, or one given back: the task is free.
    Free,
    /// Another run held it and did not renew it in time: it may be taken over.
    Expired(Holder),
    /// Another run holds it now.
    Held(Holder),
}

/// Pure: the standing of a task from its lease (if any) at `now` (milliseconds since the epoch).
pub(crate) fn standing(lease: Option<&Holder>, now: u64) -> LeaseStanding {
    match lease {
        None => LeaseStanding::Free,
        Some(h) if h.released => LeaseStanding::Free,
        Some(h) if h.until_ms <= now => LeaseStanding::Expired(h.clone()),
        Some(h) => LeaseStanding::Held(h.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn holder(until: u64, released: bool) -> Holder {
        Holder { host: "m1".into(), pid: 7, run: "r1".into(), task: "t".into(), until_ms: until, released }
    }

    #[test]
    fn message_round_trips() {
        let h = holder(100, false);
        assert!(h.message().starts_with("retry-run lease: t held by m1 (pid 7)\n\n{"));
        assert_eq!(Holder::parse(&h.message()), Some(h));
        assert_eq!(Holder::parse("a commit\n\n{}"), None);
    }

    #[test]
    fn standing_by_time_and_release() {
        assert_eq!(standing(None, 50), LeaseStanding::Free);
        assert_eq!(standing(Some(&holder(100, false)), 50), LeaseStanding::Held(holder(100, false)));
        assert_eq!(standing(Some(&holder(100, false)), 100), LeaseStanding::Expired(holder(100, false)));
        assert_eq!(standing(Some(&holder(100, true)), 50), LeaseStanding::Free);
    }
}
