//! Revisions: what the user typed, resolved to commits; merge bases.

use git2::Oid;

use super::{GitError, Repo, ctx};

/// A revision resolved to a commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Revision {
    /// What the user typed (or the default branch's name).
    pub spec: String,
    pub oid: Oid,
}

impl Repo {
    /// Resolves anything `git rev-parse` would: branch, tag, `origin/main`,
    /// a short SHA, `HEAD~2`, `main^{commit}`.
    pub fn resolve(&self, spec: &str) -> Result<Revision, GitError> {
        let obj = self.repo.revparse_single(spec).map_err(|e| match e.code() {
            git2::ErrorCode::NotFound | git2::ErrorCode::InvalidSpec | git2::ErrorCode::Ambiguous => {
                GitError::UnknownRevision { rev: spec.to_string(), hint: self.hint_for(spec, &e) }
            }
            _ => GitError::Git { what: format!("cannot resolve {spec:?}"), source: e },
        })?;
        let kind = obj.kind();
        let commit = obj.peel_to_commit().map_err(|_| GitError::NotACommit {
            rev: spec.to_string(),
            kind: kind.map_or("object", |k| k.str()).to_string(),
        })?;
        Ok(Revision { spec: spec.to_string(), oid: commit.id() })
    }

    fn hint_for(&self, spec: &str, e: &git2::Error) -> Option<String> {
        if e.code() == git2::ErrorCode::Ambiguous {
            return Some("the short SHA is ambiguous: give more digits".into());
        }
        let remote = format!("origin/{spec}");
        if self.repo.revparse_single(&remote).is_ok() {
            return Some(format!("did you mean {remote}? (CI checkouts often have only the remote branch)"));
        }
        if self.repo.is_shallow() {
            return Some("this is a shallow clone: fetch the ref first (git fetch origin REF)".into());
        }
        Some("check the name with `git branch -a` or `git tag`".into())
    }

    /// The base to compare with or start from: `spec` when one was given
    /// (a flag, else `base` in the config), else the default branch.
    /// In a repository without any commit yet, that is the error whatever
    /// was asked for ([`GitError::NoCommit`]).
    pub fn resolve_base(&self, spec: Option<&str>) -> Result<Revision, GitError> {
        let found = match spec {
            Some(spec) => self.resolve(spec),
            None => self.default_branch(),
        };
        found.map_err(|e| if self.has_no_commit() { GitError::NoCommit } else { e })
    }

    /// True when no branch, tag or other ref points at a commit and HEAD is
    /// unborn: a repository just made by `git init`.
    pub fn has_no_commit(&self) -> bool {
        let unborn = match self.repo.head() {
            Ok(_) => false,
            Err(e) => matches!(e.code(), git2::ErrorCode::UnbornBranch | git2::ErrorCode::NotFound),
        };
        unborn && self.repo.references().map_or(true, |refs| refs.flatten().all(|r| r.peel_to_commit().is_err()))
    }

    /// The default branch: what `origin/HEAD` points at, else
    /// `init.defaultBranch`, else `main`, else `master`.
    pub fn default_branch(&self) -> Result<Revision, GitError> {
        let mut candidates: Vec<String> = Vec::new();
        if let Ok(r) = self.repo.find_reference("refs/remotes/origin/HEAD")
            && let Ok(Some(target)) = r.symbolic_target()
        {
            candidates.push(target.trim_start_matches("refs/remotes/").to_string());
        }
        if let Ok(cfg) = self.repo.config()
            && let Ok(name) = cfg.get_string("init.defaultBranch")
        {
            candidates.push(name);
        }
        candidates.push("main".into());
        candidates.push("master".into());
        for name in candidates {
            if let Ok(rev) = self.resolve(&name) {
                return Ok(rev);
            }
        }
        Err(GitError::NoDefaultBranch)
    }

    /// The branch HEAD is on (`feature` for `refs/heads/feature`); `None`
    /// for a detached or unborn HEAD.
    pub fn head_branch(&self) -> Option<String> {
        let head = self.repo.head().ok()?;
        if !head.is_branch() {
            return None;
        }
        head.name().ok()?.strip_prefix("refs/heads/").map(str::to_string)
    }

    /// The commit HEAD points at.
    pub fn head(&self) -> Result<Revision, GitError> {
        match self.repo.head() {
            Ok(h) => {
                let commit = h.peel_to_commit().map_err(ctx(|| "HEAD does not point at a commit".into()))?;
                Ok(Revision { spec: "HEAD".into(), oid: commit.id() })
            }
            Err(e) if matches!(e.code(), git2::ErrorCode::UnbornBranch | git2::ErrorCode::NotFound) => {
                if self.has_no_commit() {
                    return Err(GitError::NoCommit);
                }
                Err(GitError::UnbornHead { path: self.repo.path().to_path_buf() })
            }
            Err(e) => Err(GitError::Git { what: "cannot read HEAD".into(), source: e }),
        }
    }

    /// The merge base of two commits, as `git merge-base` picks it.
    pub fn merge_base(&self, a: &Revision, b: &Revision) -> Result<Oid, GitError> {
        match self.repo.merge_base(a.oid, b.oid) {
            Ok(oid) => Ok(oid),
            Err(e) if e.code() == git2::ErrorCode::NotFound => {
                let (a, b) = (a.spec.clone(), b.spec.clone());
                if self.repo.is_shallow() {
                    Err(GitError::ShallowNoMergeBase { a, b })
                } else {
                    Err(GitError::NoMergeBase { a, b })
                }
            }
            Err(e) => Err(GitError::Git {
                what: format!("cannot find the merge base of {} and {}", a.spec, b.spec),
                source: e,
            }),
        }
    }
}
