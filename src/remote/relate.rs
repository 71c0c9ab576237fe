//! How a remote record stands to the local one (docs/fleets.md), pure over
//! the two event logs: the same, one extending the other, or diverged at
//! a named event. Pull takes a remote record only when it extends the
//! local one; nothing is ever merged.

/// The remote's event log against the local one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Relation {
    Same,
    /// The remote has every local event and more after them.
    RemoteExtends {
        more: usize,
    },
    /// The local log has every remote event and more after them.
    LocalExtends {
        more: usize,
    },
    /// They differ at event `seq` (1-based line of the log).
    Diverged {
        seq: u64,
        local: Option<String>,
        remote: Option<String>,
    },
}

/// Compares two event logs line by line.
pub(crate) fn relate(local: &[u8], remote: &[u8]) -> Relation {
    let l: Vec<&[u8]> = lines(local);
    let r: Vec<&[u8]> = lines(remote);
    let common = l.iter().zip(&r).take_while(|(a, b)| a == b).count();
    if common == l.len() && common == r.len() {
        Relation::Same
    } else if common == l.len() {
        Relation::RemoteExtends { more: r.len() - common }
    } else if common == r.len() {
        Relation::LocalExtends { more: l.len() - common }
    } else {
        Relation::Diverged {
            seq: common as u64 + 1,
            local: l.get(common).map(|x| describe(x)),
            remote: r.get(common).map(|x| describe(x)),
        }
    }
}

fn lines(log: &[u8]) -> Vec<&[u8]> {
    log.split(|&b| b == b'\n').filter(|l| !l.is_empty()).collect()
}

/// An event as the user knows it: `AgentStarted (attempt 2)`.
pub(crate) fn describe(line: &[u8]) -> String {
    let v: serde_json::Value = serde_json::from_slice(line).unwrap_or_default();
    let kind = v.get("type").and_then(|t| t.as_str()).unwrap_or("an unreadable event");
    match v.get("attempt").and_then(|a| a.as_u64()) {
        Some(n) => format!("{kind} (attempt {n})"),
        None => kind.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "{\"seq\":1,\"type\":\"TaskStarted\"}\n";
    const B: &str = "{\"seq\":2,\"type\":\"AttemptStarted\",\"attempt\":1}\n";
    const C: &str = "{\"seq\":2,\"type\":\"AttemptStarted\",\"attempt\":2}\n";

    #[test]
    fn extension_either_way_and_divergence() {
        let ab = format!("{A}{B}");
        assert_eq!(relate(A.as_bytes(), A.as_bytes()), Relation::Same);
        assert_eq!(relate(b"", A.as_bytes()), Relation::RemoteExtends { more: 1 });
        assert_eq!(relate(A.as_bytes(), ab.as_bytes()), Relation::RemoteExtends { more: 1 });
        assert_eq!(relate(ab.as_bytes(), A.as_bytes()), Relation::LocalExtends { more: 1 });
        assert_eq!(
            relate(ab.as_bytes(), format!("{A}{C}").as_bytes()),
            Relation::Diverged {
                seq: 2,
                local: Some("AttemptStarted (attempt 1)".into()),
                remote: Some("AttemptStarted (attempt 2)".into())
            }
        );
    }
}
