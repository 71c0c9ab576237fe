//! `retry-run ui`: a local web view of the repository's tasks (docs/ui.md).
//!
//! The server (`server.rs`: the listener on 127.0.0.1, the token, the
//! cookie, the origin and host checks, live updates woken by `live.rs`,
//! the actions) maps each request to a [`Route`] (pure, `routes.rs`) and
//! answers a page from `pages/`, which reads the record only through the library's
//! readers and escapes every byte that came from it.

mod actions;
pub(crate) mod assets;
mod auth;
mod live;
pub(crate) mod pages;
mod routes;
mod server;
mod site;

pub(crate) use server::{ServerOptions, UiError, serve};
pub(crate) use site::{ActionRefusal, Against, Page, PageLayout, Route, Site};
