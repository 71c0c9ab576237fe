//! The stats page: `retry-run stats`'s figures as charts drawn on the
//! server (`svg.rs`): attempts per task, success by attempt number and by
//! feedback kind, pass@k for lanes, cost per task.

use maud::{PreEscaped, html};

use super::svg::{Bar, bar_chart};
use super::{PageAnswer, Site, html_page, layout};
use crate::stats::{Rate, Stats};

fn rate_bars<K: ToString>(rates: impl Iterator<Item = (K, Rate)>) -> Vec<Bar> {
    rates
        .map(|(k, r)| Bar {
            label: k.to_string(),
            value: r.percent(),
            shown: format!("{}/{}", r.succeeded, r.attempts),
        })
        .collect()
}

/// The charts of `s`, as SVG text each with its title. Pure.
pub(crate) fn charts(s: &Stats) -> Vec<(&'static str, String)> {
    let hist: Vec<Bar> = s
        .attempts_histogram
        .iter()
        .map(|(k, n)| Bar { label: k.to_string(), value: *n as f64, shown: n.to_string() })
        .collect();
    let pass: Vec<Bar> = s
        .pass_at
        .iter()
        .map(|(k, p)| Bar { label: format!("pass@{k}"), value: *p * 100.0, shown: format!("{:.0}%", p * 100.0) })
        .collect();
    let cost: Vec<Bar> =
        s.cost_by_task.iter().map(|(t, c)| Bar { label: t.clone(), value: *c, shown: format!("${c:.2}") }).collect();
    vec![
        ("Tasks by attempts used", bar_chart("Tasks by attempts used", &hist, None)),
        (
            "Success by attempt number",
            bar_chart(
                "Success by attempt number",
                &rate_bars(s.by_attempt.iter().map(|(k, r)| (k, r.clone()))),
                Some(100.0),
            ),
        ),
        (
            "Success by feedback kind",
            bar_chart(
                "Success by feedback kind",
                &rate_bars(s.by_feedback.iter().map(|(k, r)| (k, r.clone()))),
                Some(100.0),
            ),
        ),
        ("pass@k for lanes", bar_chart("pass@k for lanes", &pass, Some(100.0))),
        ("Cost per task", bar_chart("Cost per task", &cost, None)),
    ]
}

pub(super) fn page(site: &Site<'_>) -> PageAnswer {
    let s = crate::stats_reader::read(site.store)?;
    let content = html! {
        h1 { "Stats" }
        p.meta { (s.tasks.len()) " tasks" }
        div.charts {
            @for (title, svg) in charts(&s) {
                figure.chart { figcaption { (title) } (PreEscaped(svg)) }
            }
        }
    };
    Ok(html_page(200, layout("Stats", None, content)))
}
