//! Where a run of a task resumes, from what its record says: the window of
//! attempt numbers it may use, and the base it works on. Pure.

/// What the record says of a task so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SoFar {
    /// A `TaskStarted` was recorded.
    pub started: bool,
    /// The latest round ended (succeeded or escalated).
    pub ended: bool,
    /// The first attempt of the latest round.
    pub first_attempt: u32,
    /// The highest attempt number started (0 for none).
    pub last_attempt: u32,
    /// Attempts of the latest round that were aborted before their agent
    /// ran (their worktree could not be prepared, their agent could not
    /// start): they spend no attempt of the budget.
    pub aborted: u32,
}

/// The attempt numbers a run may use: `first..=last`, starting at `next`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// The round's first attempt (it counts against `max_attempts`).
    pub first: u32,
    /// The round's last allowed attempt; never before `next`.
    pub last: u32,
    /// The next attempt to run.
    pub next: u32,
    /// A new round starts (not a resumed one).
    pub new_round: bool,
}

/// The window of a run: a new round (first run, `--again`, or a round that
/// ended) starts after the last attempt; an unfinished round resumes where
/// it stopped, within its own budget of `max_attempts` (widened by its
/// aborted attempts, which spent none of it).
pub fn window(so_far: SoFar, again: bool, max_attempts: u32) -> Window {
    let next = so_far.last_attempt + 1;
    let new_round = !so_far.started || again || so_far.ended;
    let first = if new_round { next } else { so_far.first_attempt };
    let aborted = if new_round { 0 } else { so_far.aborted };
    let last = first + max_attempts.max(1) - 1 + aborted;
    Window { first, last, next: next.max(first), new_round }
}

/// Which base a run works on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BaseChoice {
    /// The base the task recorded at its start.
    Recorded(String),
    /// A base fixed now: the revision given by `--base` or the config's
    /// `base`, else (`None`) the repository's default branch.
    Fresh(Option<String>),
}

/// The base is recorded once per task and kept, unless `--refresh-base`
/// asks for a new one (or `--base` names one for a task that has none).
pub fn choose_base(recorded: Option<&str>, refresh: bool, flag: Option<&str>, config: Option<&str>) -> BaseChoice {
    match recorded {
        Some(b) if !refresh => BaseChoice::Recorded(b.to_string()),
        _ => BaseChoice::Fresh(flag.or(config).map(String::from)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn so_far(started: bool, ended: bool, first_attempt: u32, last_attempt: u32) -> SoFar {
        SoFar { started, ended, first_attempt, last_attempt, aborted: 0 }
    }

    #[test]
    fn windows() {
        // (record so far, --again, max attempts) -> (first, last, next, new round)
        let cases = [
            (so_far(false, false, 0, 0), false, 3, (1, 3, 1, true)),
            // killed during attempt 2 of 1..=3: resume at 3 within the round
            (so_far(true, false, 1, 2), false, 3, (1, 3, 3, false)),
            // resumed with a smaller budget: nothing left to run
            (so_far(true, false, 1, 3), false, 2, (1, 2, 4, false)),
            // ended at 2: a new round starts at 3
            (so_far(true, true, 1, 2), false, 3, (3, 5, 3, true)),
            // --again on a round under way starts a new one
            (so_far(true, false, 1, 1), true, 2, (2, 3, 2, true)),
            // attempt 2 of 1..=3 aborted (its agent could not start): 1..=4, resumed at 3
            (SoFar { aborted: 1, ..so_far(true, false, 1, 2) }, false, 3, (1, 4, 3, false)),
            // an aborted attempt of an ended round widens no new one
            (SoFar { aborted: 1, ..so_far(true, true, 1, 2) }, false, 3, (3, 5, 3, true)),
        ];
        for (s, again, max, (first, last, next, new_round)) in cases {
            assert_eq!(window(s, again, max), Window { first, last, next, new_round }, "{s:?} again={again} max={max}");
        }
    }

    #[test]
    fn bases() {
        use BaseChoice::*;
        let cases = [
            (Some("abc"), false, Some("main"), None, Recorded("abc".into())),
            (Some("abc"), true, Some("main"), Some("dev"), Fresh(Some("main".into()))),
            (Some("abc"), true, None, Some("dev"), Fresh(Some("dev".into()))),
            (Some("abc"), true, None, None, Fresh(None)),
            (None, false, Some("main"), Some("dev"), Fresh(Some("main".into()))),
            (None, false, None, None, Fresh(None)),
        ];
        for (recorded, refresh, flag, config, want) in cases {
            assert_eq!(
                choose_base(recorded, refresh, flag, config),
                want,
                "{recorded:?} {refresh} {flag:?} {config:?}"
            );
        }
    }
}
