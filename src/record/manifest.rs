//! Manifests (docs/record.md): an attempt's inputs, frozen, hashed as
//! sha256 over canonical JSON (sorted keys, no insignificant whitespace).
//! Pure.

use serde::Serialize;
use serde_json::Value;

use crate::hash::sha256_hex;

/// Canonical JSON: keys sorted at every level, no whitespace.
pub(crate) fn canonical_json(v: &Value) -> String {
    // serde_json's map is ordered by key (no `preserve_order` feature), and
    // `to_string` writes no insignificant whitespace.
    sort(v).to_string()
}

fn sort(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(m.iter().map(|(k, v)| (k.clone(), sort(v))).collect()),
        Value::Array(a) => Value::Array(a.iter().map(sort).collect()),
        other => other.clone(),
    }
}

/// The inputs of one attempt.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Manifest {
    pub task: String,
    pub attempt: u32,
    pub base: String,
    /// The config that shapes the attempt (agent, checks, scope, context).
    pub config: Value,
    pub context_sha256: String,
    pub prompt_sha256: String,
    /// The manifest hashes of attempts 1..attempt-1, in order.
    pub prior_manifests: Vec<String>,
}

impl Manifest {
    pub(crate) fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// The manifest as canonical JSON, and that text's sha256.
    pub(crate) fn canonical(&self) -> Canonical {
        let json = canonical_json(&self.to_value());
        let sha256 = sha256_hex(json.as_bytes());
        Canonical { json, sha256 }
    }
}

/// A manifest written canonically: the text and its sha256.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Canonical {
    pub(crate) json: String,
    pub(crate) sha256: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn canonical_json_sorts_every_level_and_has_no_whitespace() {
        let v = json!({"b": 1, "a": {"z": [ {"y": 2, "x": 1} ], "c": "s p"}});
        assert_eq!(canonical_json(&v), r#"{"a":{"c":"s p","z":[{"x":1,"y":2}]},"b":1}"#);
    }

    #[test]
    fn the_hash_depends_on_earlier_manifests() {
        let m = Manifest {
            task: "t".into(),
            attempt: 2,
            base: "abc".into(),
            config: json!({"max_attempts": 3}),
            context_sha256: "c".into(),
            prompt_sha256: "p".into(),
            prior_manifests: vec!["h1".into()],
        };
        let mut other = m.clone();
        other.prior_manifests = vec!["h2".into()];
        assert_ne!(m.canonical().sha256, other.canonical().sha256);
        assert_eq!(m.canonical(), m.clone().canonical());
        assert!(m.canonical().json.starts_with(r#"{"attempt":2,"base":"abc","config":{"max_attempts":3}"#));
    }
}
