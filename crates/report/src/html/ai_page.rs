//! The AI documents' sections of `iolab report`'s page (`iolab ai train`, `iolab ai checkpoint`): headline
//! cards, then every line of the document's own text as a row, so the page says all the terminal said; the
//! warnings are the page's, under Warnings ([`super::parts::warnings_section`]), not repeated here.

use super::escape_html as esc;
use super::parts::card;
use crate::html::db_page::warnings_card;
use crate::plugin::{Page, ReportDoc};
use std::fmt::Write as _;

/// A headline card: (key, value, what it is).
pub(crate) type Card = (&'static str, String, String);

/// The section of an AI document `d`: `title` and its label, the cards, then the text's lines (after its
/// first, the title line) as rows, warnings left out.
pub(crate) fn ai_section(p: &mut Page, d: &ReportDoc, (title, class): (&str, &str), cards: &[Card]) {
    let out = &mut p.out;
    let _ = writeln!(out, "<section class=\"{class}\">\n<h2>{title}: {}</h2>", esc(&d.label));
    out.push_str("<div class=\"cards\">");
    for (k, v, sub) in cards {
        card(out, k, v, sub, "");
    }
    warnings_card(out, d.body.warnings().len());
    out.push_str("</div>\n<h3>What ran, what it did, what it cost</h3>\n<table class=\"facts\">");
    let text = d.body.text();
    for line in text.lines().skip(1).map(str::trim).filter(|l| !l.is_empty() && !l.starts_with("warning:")) {
        let (k, v) = line.split_once(": ").unwrap_or(("", line));
        let _ = writeln!(out, "<tr><th>{}</th><td>{}</td></tr>", esc(k), esc(v));
    }
    out.push_str("</table>\n</section>\n");
}
