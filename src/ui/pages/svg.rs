//! Charts as inline SVG, drawn on the server: pure functions from figures
//! to SVG text (no script, no style attribute; colours come from the
//! stylesheet's classes). Labels come from the record and are escaped.

use std::fmt::Write;

use super::html as esc;

/// One bar: its label under the axis, its value, and the value as shown.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Bar {
    pub label: String,
    pub value: f64,
    pub shown: String,
}

const BAR_W: usize = 36;
const GAP: usize = 12;
const PLOT_H: f64 = 160.0;
const TOP: usize = 28;
const BOTTOM: usize = 40;
const LEFT: usize = 12;

/// A bar chart titled `title` (its `aria-label`); `max`, when given, is
/// the top of the scale (100 for percentages), else the largest value.
/// No bars: a chart that says so.
pub(crate) fn bar_chart(title: &str, bars: &[Bar], max: Option<f64>) -> String {
    let width = LEFT * 2 + bars.len().max(1) * (BAR_W + GAP);
    let height = TOP + PLOT_H as usize + BOTTOM;
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" width="{width}" height="{height}" viewBox="0 0 {width} {height}" aria-label="{}">"#,
        esc::attr(title).0
    );
    let _ = write!(s, "<title>{}</title>", esc::text(title).0);
    if bars.is_empty() {
        let _ = write!(s, r#"<text class="empty" x="{LEFT}" y="{}">no data yet</text></svg>"#, TOP + 20);
        return s;
    }
    let top = max.unwrap_or_else(|| bars.iter().map(|b| b.value).fold(0.0, f64::max));
    let base = TOP as f64 + PLOT_H;
    let _ = write!(s, r#"<line class="axis" x1="{LEFT}" y1="{base}" x2="{}" y2="{base}"/>"#, width - LEFT);
    for (i, b) in bars.iter().enumerate() {
        let h = if top > 0.0 && b.value.is_finite() { (b.value.max(0.0) / top).min(1.0) * PLOT_H } else { 0.0 };
        let x = LEFT + GAP / 2 + i * (BAR_W + GAP);
        let y = base - h;
        let cx = x + BAR_W / 2;
        let _ = write!(
            s,
            r#"<g class="bar"><rect x="{x}" y="{y:.1}" width="{BAR_W}" height="{h:.1}"><title>{}: {}</title></rect><text class="value" x="{cx}" y="{:.1}" text-anchor="middle">{}</text><text class="label" x="{cx}" y="{}" text-anchor="middle">{}</text></g>"#,
            esc::text(&b.label).0,
            esc::text(&b.shown).0,
            y - 4.0,
            esc::text(&b.shown).0,
            base as usize + 16,
            esc::text(&b.label).0,
        );
    }
    s.push_str("</svg>");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bar(label: &str, value: f64) -> Bar {
        Bar { label: label.into(), value, shown: format!("{value}") }
    }

    /// The heights of the chart's bars, in order.
    fn heights(svg: &str) -> Vec<f64> {
        svg.split(r#"height=""#).skip(2).filter_map(|rest| rest.split('"').next()?.parse().ok()).collect()
    }

    #[test]
    fn bars_are_scaled_to_the_largest_or_to_the_given_top() {
        let cases: [(&[Bar], Option<f64>, &[f64]); 4] = [
            (&[bar("1", 2.0), bar("2", 4.0)], None, &[80.0, 160.0]),
            (&[bar("1", 50.0), bar("2", 100.0)], Some(100.0), &[80.0, 160.0]),
            (&[bar("a", 0.0), bar("b", 0.0)], None, &[0.0, 0.0]),
            (&[bar("over", 150.0), bar("neg", -3.0)], Some(100.0), &[160.0, 0.0]),
        ];
        for (bars, max, want) in cases {
            let svg = bar_chart("t", bars, max);
            assert_eq!(heights(&svg), want, "{svg}");
            assert_eq!(svg.matches("<rect").count(), bars.len());
        }
    }

    #[test]
    fn no_bars_says_so_and_labels_are_escaped() {
        assert!(bar_chart("empty", &[], None).contains("no data yet"));
        let svg = bar_chart("<script>t</script>", &[bar("<img src=x onerror=alert(1)>", 1.0)], None);
        assert!(!svg.contains("<script>") && !svg.contains("<img"), "{svg}");
        assert!(svg.contains("&lt;img src=x onerror=alert(1)&gt;"));
    }
}
