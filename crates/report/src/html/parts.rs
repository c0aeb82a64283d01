//! The pieces every section of the HTML page is made of: a grid of figures (each chart drawn to SVG, or a note
//! saying why not), a summary card, a table of numbers. A leaf: the page and its database sections both use
//! it, and it uses neither.

use std::fmt::Write as _;

use super::charts::{bar_svg, line_svg, BarChart, LineChart, CHART_SIZE, WIDE_CHART_SIZE};
use super::escape_html as esc;

/// A chart of a section, before it is drawn.
enum Chart {
    Line(Box<LineChart>),
    Bar(BarChart),
}

impl Chart {
    /// The chart as SVG whose `viewBox` is `size` pixels and whose width is its container's (`100%`, the
    /// `viewBox` keeping the aspect), or why it is not drawn.
    fn svg(&self, size: (u32, u32)) -> Result<String, String> {
        let svg = match self {
            Chart::Line(c) => line_svg(c, size),
            Chart::Bar(c) => bar_svg(c, size),
        }?;
        let fixed = format!("width=\"{}\" height=\"{}\"", size.0, size.1);
        Ok(svg.replacen(&fixed, "width=\"100%\"", 1))
    }
}

/// A section's figures, laid out in a grid of two columns on a wide page (one on a narrow one or in print).
#[derive(Default)]
pub(crate) struct Grid {
    /// Per figure: its kind (`data-chart`), chart and caption.
    figures: Vec<(String, Chart, String)>,
}

impl Grid {
    pub(crate) fn line(&mut self, kind: &str, c: LineChart, caption: &str) {
        self.figures.push((kind.to_string(), Chart::Line(Box::new(c)), caption.to_string()));
    }

    pub(crate) fn bar(&mut self, kind: &str, c: BarChart, caption: &str) {
        self.figures.push((kind.to_string(), Chart::Bar(c), caption.to_string()));
    }

    /// Draws the figures into `out`, numbering them from `n`. The last of an odd number of drawn charts
    /// spans both columns and is drawn wide, so no half of the page is left empty; charts with nothing to
    /// draw become a note under the grid.
    pub(crate) fn write(self, out: &mut String, n: &mut usize) {
        let mut drawn: Vec<(String, String, String)> = Vec::new();
        let mut notes = String::new();
        let mut last_chart = None;
        for (kind, chart, caption) in self.figures {
            match chart.svg(CHART_SIZE) {
                Ok(svg) => {
                    drawn.push((kind, svg, caption));
                    last_chart = Some(chart);
                }
                Err(why) => {
                    let _ = writeln!(
                        notes,
                        "<p class=\"nochart\">{}: not drawn ({})</p>",
                        esc(&caption),
                        esc(&why)
                    );
                }
            }
        }
        let wide = drawn.len() % 2 == 1;
        if let (true, Some(chart), Some(last)) = (wide, last_chart, drawn.last_mut()) {
            last.1 = chart.svg(WIDE_CHART_SIZE).unwrap_or_else(|_| last.1.clone());
        }
        out.push_str("<div class=\"charts\">\n");
        let count = drawn.len();
        for (i, (kind, svg, caption)) in drawn.into_iter().enumerate() {
            figure(out, &kind, &svg, &caption, wide && i + 1 == count, n);
        }
        out.push_str("</div>\n");
        out.push_str(&notes);
    }
}

/// A drawn chart in its figure, scaled to the figure's width (`width="100%"` over the SVG's `viewBox`).
fn figure(out: &mut String, kind: &str, svg: &str, caption: &str, wide: bool, n: &mut usize) {
    *n += 1;
    // Inline SVG in HTML needs no namespace; dropping it keeps the page free of any URL.
    let svg = svg.replacen(" xmlns=\"http://www.w3.org/2000/svg\"", "", 1);
    let _ = writeln!(
        out,
        "<figure class=\"chart{}\" id=\"chart-{n}\" data-chart=\"{}\">{svg}<figcaption>{}</figcaption></figure>",
        if wide { " wide" } else { "" },
        esc(kind),
        esc(caption)
    );
}

pub(crate) fn card(out: &mut String, key: &str, value: &str, sub: &str, class: &str) {
    let _ = write!(
        out,
        "<div class=\"card {class}\"><div class=\"k\">{}</div><div class=\"v\">{}</div><div class=\"s\">{}</div></div>",
        esc(key),
        esc(value),
        esc(sub)
    );
}

/// A table with a header row; the columns after the first are numbers (right-aligned).
pub(crate) fn numbers_table(out: &mut String, header: &[&str], rows: &[Vec<String>]) {
    out.push_str("<table><tr>");
    for (i, h) in header.iter().enumerate() {
        let _ = write!(out, "<th{}>{}</th>", if i > 0 { " class=\"n\"" } else { "" }, esc(h));
    }
    out.push_str("</tr>\n");
    for r in rows {
        out.push_str("<tr>");
        for (i, c) in r.iter().enumerate() {
            let _ = write!(out, "<td{}>{}</td>", if i > 0 { " class=\"n\"" } else { "" }, esc(c));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table>\n");
}

/// Every input's warnings ([`crate::plugin::Document::warnings`]) in one table under the table of inputs:
/// written here for every input of every kind, so no kind's section can leave its warnings out. Each row is a
/// `<tr class="warning">` (the tests count them).
pub(crate) fn warnings_section(out: &mut String, docs: &[super::ReportDoc]) {
    let all: Vec<(&str, crate::plugin::Warned)> =
        docs.iter().flat_map(|d| d.body.warnings().into_iter().map(move |w| (d.label.as_str(), w))).collect();
    let _ = writeln!(out, "<section class=\"warnings\" id=\"warnings\">\n<h2>Warnings ({})</h2>", all.len());
    if all.is_empty() {
        out.push_str("<p class=\"meta\">None: no input carries a warning.</p>\n</section>\n");
        return;
    }
    out.push_str("<table><tr><th>input</th><th>where</th><th>warning</th><th>what to do</th></tr>\n");
    for (label, w) in &all {
        let _ = writeln!(
            out,
            "<tr class=\"warning\"><td>{}</td><td>{}</td><td class=\"warn\">{}</td><td>{}</td></tr>",
            esc(label),
            esc(&w.at),
            esc(&w.text),
            esc(&w.hint)
        );
    }
    out.push_str("</table>\n</section>\n");
}
