//! The remote, through the `git` program (docs/fleets.md): the user's own
//! credentials, helpers and SSH setup apply, as with cargo's
//! `net.git-fetch-with-cli`. Local work stays in libgit2.

use std::path::Path;

use super::RemoteError;

/// What a ref on the remote must be for a push to move it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Expect {
    /// The ref must not exist.
    Absent,
    /// The ref must point at this object (hex id).
    At(String),
}

/// One ref to move on the remote.
#[derive(Debug, Clone)]
pub(crate) struct Update {
    /// The local object (hex id) or ref to send.
    pub src: String,
    pub dst: String,
    /// Compare-and-swap: refused unless the remote's ref is as expected.
    pub expect: Option<Expect>,
}

/// How a run of `git` ended: whether it succeeded, its stdout and its
/// stderr (trimmed).
struct Ran {
    ok: bool,
    stdout: String,
    stderr: String,
}

/// Runs `git -C dir args`; `Err`, naming what needed it, when `git` could
/// not be started.
fn git(dir: &Path, args: &[String], what: &str, remote: &str) -> Result<Ran, RemoteError> {
    // No hook or fsmonitor of the repository's config runs: what retry-run
    // itself runs never executes code from a config an agent could have
    // reached.
    let mut argv: Vec<&std::ffi::OsStr> = vec![
        "-C".as_ref(),
        dir.as_os_str(),
        "-c".as_ref(),
        "core.hooksPath=/dev/null".as_ref(),
        "-c".as_ref(),
        "core.fsmonitor=false".as_ref(),
    ];
    argv.extend(args.iter().map(std::ffi::OsStr::new));
    let out = crate::process::output("git", &argv, None).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            RemoteError::NoGit { what: what.to_string() }
        } else {
            RemoteError::Transport { remote: remote.to_string(), what: what.to_string(), detail: e.to_string() }
        }
    })?;
    Ok(Ran {
        ok: out.status.success(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
    })
}

/// `git fetch --prune <remote> <refspecs>`; FETCH_HEAD is not written.
pub(crate) fn fetch(dir: &Path, remote: &str, refspecs: &[String], what: &str) -> Result<(), RemoteError> {
    let mut args: Vec<String> =
        ["fetch", "--quiet", "--prune", "--no-tags", "--no-write-fetch-head", remote].map(String::from).to_vec();
    args.extend(refspecs.iter().cloned());
    let Ran { ok, stderr: err, .. } = git(dir, &args, what, remote)?;
    if ok { Ok(()) } else { Err(RemoteError::Transport { remote: remote.into(), what: what.into(), detail: err }) }
}

/// How a push went: every ref moved, or some were refused (with git's
/// reason); with `atomic`, a refusal means nothing moved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Pushed {
    Done,
    Refused(Vec<(String, String)>),
}

/// `git push --porcelain [--atomic] <remote> <src>:<dst>...`, each
/// update with an expectation guarded by `--force-with-lease`.
pub(crate) fn push(
    dir: &Path,
    remote: &str,
    updates: &[Update],
    atomic: bool,
    what: &str,
) -> Result<Pushed, RemoteError> {
    if updates.is_empty() {
        return Ok(Pushed::Done);
    }
    let mut args: Vec<String> = vec!["push".into(), "--porcelain".into(), "--quiet".into()];
    if atomic {
        args.push("--atomic".into());
    }
    for u in updates {
        match &u.expect {
            Some(Expect::Absent) => args.push(format!("--force-with-lease={}:", u.dst)),
            Some(Expect::At(oid)) => args.push(format!("--force-with-lease={}:{oid}", u.dst)),
            None => {}
        }
    }
    args.push(remote.into());
    args.extend(updates.iter().map(|u| format!("{}:{}", u.src, u.dst)));
    let Ran { ok, stdout: out, stderr: err } = git(dir, &args, what, remote)?;
    let refused = refused(&out);
    if ok && refused.is_empty() {
        return Ok(Pushed::Done);
    }
    if refused.is_empty() {
        // Failed before any ref was judged: the remote could not be reached.
        return Err(RemoteError::Transport { remote: remote.into(), what: what.into(), detail: err });
    }
    Ok(Pushed::Refused(refused))
}

/// The refs `git push --porcelain` refused, with its reasons.
fn refused(porcelain: &str) -> Vec<(String, String)> {
    porcelain
        .lines()
        .filter(|l| l.starts_with('!'))
        .filter_map(|l| {
            let mut parts = l.splitn(3, '\t');
            let _flag = parts.next()?;
            let refs = parts.next()?;
            let reason = parts.next().unwrap_or("").to_string();
            let dst = refs.rsplit(':').next().unwrap_or(refs).to_string();
            Some((dst, reason))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn porcelain_refusals() {
        let out = "To /tmp/remote.git\n!\tabc:refs/retry-run/t/lease\t[rejected] (stale info)\n=\tdef:refs/retry-run/t/1\t[up to date]\nDone\n";
        assert_eq!(refused(out), vec![("refs/retry-run/t/lease".to_string(), "[rejected] (stale info)".to_string())]);
        assert!(refused("To x\n*\ta:refs/x\t[new reference]\nDone\n").is_empty());
    }
}
