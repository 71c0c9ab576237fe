//! How an agent or a check is started: a [`CommandSpec`] (an argv list or
//! one shell line) or a preset's [`PresetName`], each checked as it is
//! read.

use std::fmt;

use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};

/// The name of a built-in agent preset, checked against the presets.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct PresetName(pub String);

impl<'de> Deserialize<'de> for PresetName {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        crate::agents::preset(&s).map(|_| PresetName(s)).map_err(de::Error::custom)
    }
}

/// A command: an argv list run directly, or one string run by `sh -c`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum CommandSpec {
    Argv(Vec<String>),
    Shell(String),
}

impl<'de> Deserialize<'de> for CommandSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = CommandSpec;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a command string (run by sh -c) or a list of arguments")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<CommandSpec, E> {
                if s.trim().is_empty() {
                    return Err(E::custom("the command is empty"));
                }
                Ok(CommandSpec::Shell(s.to_string()))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<CommandSpec, A::Error> {
                let mut argv = Vec::new();
                while let Some(arg) = seq.next_element::<String>()? {
                    argv.push(arg);
                }
                if argv.first().is_none_or(|a| a.is_empty()) {
                    return Err(de::Error::custom("the command list is empty or starts with an empty program name"));
                }
                Ok(CommandSpec::Argv(argv))
            }
        }
        d.deserialize_any(V)
    }
}
