//! What detect mode saw a process reach ([`NetworkSeen`]): recorded for
//! an agent and for each check.

use serde::{Deserialize, Serialize};

/// What detect mode saw the agent reach that the sandbox's other modes
/// would have stopped (docs/sandbox.md, "Detect mode").
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NetworkSeen {
    /// `network` (a connection or datagram out, DNS, the machine's own
    /// servers), `unix-socket` (a named socket outside the worktree and
    /// TMPDIR, or one of the machine's abstract ones), or `unobserved`
    /// (nothing could be seen; `what` says why).
    pub kind: String,
    /// What it was: "TCP connect to 203.0.113.5:443 by python3".
    pub what: String,
    /// How many times.
    #[serde(default)]
    pub count: u64,
}

impl NetworkSeen {
    /// Whether it is something the agent did (not a note that nothing
    /// could be seen).
    pub(crate) fn is_finding(&self) -> bool {
        self.kind != "unobserved"
    }
}
