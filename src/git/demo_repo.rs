//! The demo's repository (`retry-run demo`): a new repository whose `main`
//! holds the demo's files in one commit.

use std::path::Path;

use super::GitError;

/// Initialises a repository at `root` whose `main` holds `files` (path,
/// content) in one commit.
pub(crate) fn create(root: &Path, files: &[(&str, &str)], message: &str) -> Result<(), GitError> {
    let err = |what: &'static str| {
        move |e: git2::Error| GitError::Git { what: format!("{}: cannot {what}", root.display()), source: e }
    };
    let mut opts = git2::RepositoryInitOptions::new();
    opts.initial_head("main");
    let repo = git2::Repository::init_opts(root, &opts).map_err(err("create the repository"))?;
    for (path, text) in files {
        let p = root.join(path);
        if let Some(dir) = p.parent() {
            std::fs::create_dir_all(dir).map_err(|e| GitError::Io { path: dir.to_path_buf(), source: e })?;
        }
        std::fs::write(&p, text).map_err(|e| GitError::Io { path: p.clone(), source: e })?;
    }
    let mut index = repo.index().map_err(err("open the index"))?;
    index.add_all(["*"], git2::IndexAddOption::DEFAULT, None).map_err(err("add the files"))?;
    index.write().map_err(err("write the index"))?;
    let tree = repo.find_tree(index.write_tree().map_err(err("write the tree"))?).map_err(err("read the tree"))?;
    let sig = git2::Signature::now("retry-run", "retry-run@localhost").map_err(err("make a signature"))?;
    repo.commit(Some("HEAD"), &sig, &sig, message, &tree, &[]).map_err(err("commit"))?;
    Ok(())
}
