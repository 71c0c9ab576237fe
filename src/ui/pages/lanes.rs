//! A task's lanes side by side: each lane's agent, its attempts with their
//! outcomes (linked to their pages), how it ended, and the lane chosen.

use maud::html;

use super::html as esc;
use super::view::lanes;
use super::{PageAnswer, Site, html_page, layout};

pub(super) fn page(site: &Site<'_>, id: &str) -> PageAnswer {
    let all = lanes(site.store, id)?;
    let content = html! {
        h1 { "Lanes of " a href=(esc::task_href(id)) { (esc::text(id)) } }
        @if all.is_empty() { p { "This task did not run in lanes." } }
        div.lanes {
            @for l in &all {
                section class={ "lane" @if l.chosen { " winner" } } {
                    h2 { "Lane " (l.lane) @if l.chosen { " " span.badge.winner { "chosen" } } }
                    p.meta {
                        @if let Some(a) = &l.agent { "agent " code { (esc::text(a)) } }
                        @if let Some(e) = &l.ending { " · " (esc::text(e)) } @else { " · running" }
                    }
                    ol.attempts {
                        @for r in &l.attempts {
                            li {
                                a href=(esc::href(&["tasks", &l.record, "attempts", &r.number.to_string()], &[])) { "Attempt " (r.number) }
                                " " span class={ "badge " (r.outcome.as_str().to_lowercase()) } { (r.outcome.as_str()) }
                                " " (crate::text::human_ms(r.duration_ms))
                            }
                        }
                    }
                }
            }
        }
    };
    Ok(html_page(200, layout(&format!("Lanes of {id}"), None, content)))
}
