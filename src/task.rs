//! Tasks: from a Markdown task file (`run --task-file`) or a line of text
//! (`--task`). Pure.
//!
//! A task file may open with TOML front matter between `+++` lines; its
//! keys override the project's config for this task alone. The first `#`
//! heading is the title, a `## Success criteria` section the criteria, the
//! rest the description. The original text is kept whole: it is what the
//! agent reads, never cut.

use std::path::{Path, PathBuf};

use crate::config::{Config, ConfigError};

#[derive(Debug, Clone, PartialEq)]
pub struct Task {
    pub id: String,
    pub title: String,
    pub description: String,
    pub criteria: Option<String>,
    /// The task text without its front matter, as the agent reads it.
    pub text: String,
    /// The front matter, parsed (empty table when there is none).
    pub overrides: toml::Table,
    /// The front matter as written, for the record.
    pub front_matter: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum TaskError {
    #[error("{}:{line}: {message}", path.display())]
    Invalid { path: PathBuf, line: usize, message: String },
    #[error(transparent)]
    Config(#[from] ConfigError),
}

/// Parses a task file's text; `path` names the file in errors.
pub fn parse_file(text: &str, path: &Path) -> Result<Task, TaskError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let (front, body) = split_front_matter(text).map_err(|line| TaskError::Invalid {
        path: path.to_path_buf(),
        line,
        message: "the front matter opened with +++ is never closed; end it with a line +++".into(),
    })?;
    let overrides = match front {
        Some(fm) => {
            // Validate against the config schema, with line numbers of the task file
            // (the front matter starts on line 2).
            let shifted = format!("\n{fm}");
            Config::parse(&shifted, path)?;
            shifted.parse::<toml::Table>().map_err(|e| TaskError::Invalid {
                path: path.to_path_buf(),
                line: 1,
                message: e.message().to_string(),
            })?
        }
        None => toml::Table::new(),
    };
    let title = body
        .lines()
        .find_map(|l| l.strip_prefix("# ").map(|t| t.trim().to_string()))
        .filter(|t| !t.is_empty())
        .or_else(|| {
            body.lines().map(str::trim).find(|l| !l.is_empty()).map(|l| l.trim_start_matches('#').trim().to_string())
        })
        .ok_or_else(|| TaskError::Invalid {
            path: path.to_path_buf(),
            line: 1,
            message: "the task file is empty; write the task, starting with a `# Title` line".into(),
        })?;
    let (description, criteria) = split_criteria(body);
    Ok(Task {
        id: slug(&title),
        title,
        description,
        criteria,
        text: body.trim_end().to_string() + "\n",
        overrides,
        front_matter: front.map(str::to_string),
    })
}

/// A task given as `--task TEXT`.
pub fn from_text(text: &str) -> Option<Task> {
    let t = text.trim();
    let title = t.lines().next()?.trim().to_string();
    Some(Task {
        id: slug(&title),
        title,
        description: t.to_string(),
        criteria: None,
        text: t.to_string() + "\n",
        overrides: toml::Table::new(),
        front_matter: None,
    })
}

/// The full text of a task file as recorded: front matter and body.
pub fn file_text(task: &Task) -> String {
    match &task.front_matter {
        Some(fm) => format!("+++\n{fm}+++\n{}", task.text),
        None => task.text.clone(),
    }
}

/// `Some(front matter)` and the rest; `Err(line)` for an unclosed block.
fn split_front_matter(text: &str) -> Result<(Option<&str>, &str), usize> {
    let Some(rest) = text.strip_prefix("+++\n").or_else(|| text.strip_prefix("+++\r\n")) else {
        return Ok((None, text));
    };
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end() == "+++" {
            return Ok((Some(&rest[..offset]), &rest[offset + line.len()..]));
        }
        offset += line.len();
    }
    Err(1)
}

fn split_criteria(body: &str) -> (String, Option<String>) {
    let mut desc = Vec::new();
    let mut crit: Vec<&str> = Vec::new();
    let mut in_criteria = false;
    let mut title_seen = false;
    for line in body.lines() {
        let heading = line.trim_start();
        if !title_seen && heading.starts_with("# ") {
            title_seen = true;
            continue;
        }
        if let Some(name) = heading.strip_prefix("## ") {
            in_criteria = name.trim().trim_end_matches(':').eq_ignore_ascii_case("success criteria");
            if in_criteria {
                continue;
            }
        }
        if in_criteria { crit.push(line) } else { desc.push(line) }
    }
    let criteria = crit.join("\n").trim().to_string();
    (desc.join("\n").trim().to_string(), (!criteria.is_empty()).then_some(criteria))
}

/// A task id from a title: lowercase ASCII letters and digits joined by
/// `-`, at most 60 characters; `task` when nothing is left.
pub fn slug(title: &str) -> String {
    let mut out = String::new();
    for c in title.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
        if out.len() >= 60 {
            break;
        }
    }
    let out = out.trim_end_matches('-').to_string();
    if out.is_empty() { "task".into() } else { out }
}

/// The project's config with the task's front matter over it: tables are
/// merged key by key, anything else (arrays included) is replaced.
pub fn merge(project: &toml::Table, task: &toml::Table) -> toml::Table {
    let mut out = project.clone();
    for (k, v) in task {
        match (out.get_mut(k), v) {
            (Some(toml::Value::Table(a)), toml::Value::Table(b)) => {
                let merged = merge(a, b);
                *a = merged;
            }
            _ => {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Task, String> {
        parse_file(text, Path::new("task.md")).map_err(|e| e.to_string())
    }

    #[test]
    fn title_description_and_criteria() {
        let t = parse("# Fix the login bug\n\nUsers cannot log in.\n\n## Success criteria\n\n- tests pass\n").unwrap();
        assert_eq!(t.id, "fix-the-login-bug");
        assert_eq!(t.title, "Fix the login bug");
        assert_eq!(t.description, "Users cannot log in.");
        assert_eq!(t.criteria.as_deref(), Some("- tests pass"));
        assert!(t.overrides.is_empty());
    }

    #[test]
    fn front_matter_overrides_and_errors_name_the_line() {
        let t = parse("+++\nmax_attempts = 5\n[scope]\nallow = [\"src/**\"]\n+++\n# T\nbody\n").unwrap();
        assert_eq!(t.overrides["max_attempts"].as_integer(), Some(5));
        assert_eq!(t.text, "# T\nbody\n");
        assert_eq!(file_text(&t), "+++\nmax_attempts = 5\n[scope]\nallow = [\"src/**\"]\n+++\n# T\nbody\n");
        let err = parse("+++\nmax_attempts = 5\nmax_atempts = 2\n+++\n# T\n").unwrap_err();
        assert!(err.starts_with("task.md:3:1: unknown field `max_atempts`"), "{err}");
        let err = parse("+++\nmax_attempts = 5\n# T\n").unwrap_err();
        assert!(err.contains("never closed"), "{err}");
        assert!(parse("\n  \n").unwrap_err().contains("empty"));
    }

    #[test]
    fn slugs() {
        assert_eq!(slug("Fix: the *login* bug!"), "fix-the-login-bug");
        assert_eq!(slug("Überprüfen"), "berpr-fen");
        assert_eq!(slug("!!!"), "task");
        assert!(slug(&"a".repeat(200)).len() <= 60);
    }

    #[test]
    fn merge_is_deep_for_tables() {
        let p: toml::Table = "max_attempts = 3\n[scope]\nallow=[\"a\"]\ndeny=[\"b\"]\n".parse().unwrap();
        let t: toml::Table = "[scope]\nallow=[\"c\"]\n".parse().unwrap();
        let m = merge(&p, &t);
        assert_eq!(m["scope"]["allow"].as_array().unwrap()[0].as_str(), Some("c"));
        assert_eq!(m["scope"]["deny"].as_array().unwrap()[0].as_str(), Some("b"));
        assert_eq!(m["max_attempts"].as_integer(), Some(3));
    }
}
