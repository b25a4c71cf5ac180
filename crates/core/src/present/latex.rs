//! The report as LaTeX: each table, and `report.tex` with the tables and figures.

use natstudy_types::{FigureView, TableView};

use super::tables::p_text;

/// A table as LaTeX a stock TeX Live compiles (booktabs, and graphicx to shrink a table wider
/// than the text; no `siunitx`): the title and what it
/// measures as the caption, `\label{tab:ID}`, the first column left-aligned and the others
/// right-aligned, p-values as `< 0.001` or three significant digits, every special character
/// escaped and the report's symbols (κ, →, −, ≥, …) in math mode.
pub fn table_latex(t: &TableView) -> String {
    use std::fmt::Write;
    let p_col = t.header.iter().position(|h| h == "p");
    let cols: String = (0..t.header.len())
        .map(|i| if i == 0 { 'l' } else { 'r' })
        .collect();
    let mut s = String::new();
    let _ = writeln!(s, "% natstudy: {}", latex_escape(&t.title));
    // here (after its section's heading) where it fits; a [t] float went above the heading
    let _ = writeln!(s, "\\begin{{table}}[htbp]\n  \\centering");
    let caption = if t.note.is_empty() {
        latex_escape(&t.title)
    } else {
        format!("{}. {}", latex_escape(&t.title), latex_escape(&t.note))
    };
    let _ = writeln!(s, "  \\caption{{{caption}}}");
    let _ = writeln!(s, "  \\label{{tab:{}}}", t.id);
    // a table wider than the text shrinks to it (graphicx), a narrower one keeps its size
    let _ = writeln!(
        s,
        "  \\resizebox{{\\ifdim\\width>\\linewidth\\linewidth\\else\\width\\fi}}{{!}}{{%\n  \\begin{{tabular}}{{{cols}}}\n    \\toprule"
    );
    let row = |cells: &[String], header: bool| -> String {
        cells
            .iter()
            .enumerate()
            .map(|(i, c)| {
                if !header && Some(i) == p_col {
                    p_value(c)
                } else {
                    latex_escape(c)
                }
            })
            .collect::<Vec<_>>()
            .join(" & ")
    };
    let _ = writeln!(s, "    {} \\\\\n    \\midrule", row(&t.header, true));
    for r in &t.rows {
        let _ = writeln!(s, "    {} \\\\", row(r, false));
    }
    let _ = writeln!(s, "    \\bottomrule\n  \\end{{tabular}}}}\n\\end{{table}}");
    s
}

/// A p-value cell in LaTeX: `$<$ 0.001`, or its three significant digits.
fn p_value(cell: &str) -> String {
    match cell.trim() {
        "< 0.001" => "$<$ 0.001".into(),
        c => match c.parse::<f64>() {
            Ok(p) if p.is_finite() => p_text(p).replace('<', "$<$"),
            _ => latex_escape(c),
        },
    }
}

/// Text safe in LaTeX: its special characters escaped, the report's symbols in math mode.
pub fn latex_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\textbackslash{}"),
            '&' | '%' | '$' | '#' | '_' | '{' | '}' => {
                out.push('\\');
                out.push(c);
            }
            '~' => out.push_str("\\textasciitilde{}"),
            '^' => out.push_str("\\textasciicircum{}"),
            'κ' => out.push_str("$\\kappa$"),
            'α' => out.push_str("$\\alpha$"),
            '→' => out.push_str("$\\rightarrow$"),
            '−' => out.push_str("$-$"),
            '—' => out.push_str("---"),
            '–' => out.push_str("--"),
            '≥' => out.push_str("$\\geq$"),
            '≤' => out.push_str("$\\leq$"),
            '·' => out.push_str("$\\cdot$"),
            '′' => out.push_str("$'$"),
            '×' => out.push_str("$\\times$"),
            _ => out.push(c),
        }
    }
    out
}

/// `report.tex`: a document that inputs every table (`tables/ID.tex`) and includes every figure
/// (`figures/ID.pdf`, with its title and caption and `\label{fig:ID}`), and compiles with
/// pdflatex from a stock TeX Live (article, geometry, inputenc, fontenc, booktabs, graphicx).
/// The text is as wide as a two-column paper's page (7.16 in, geometry) and every figure is
/// placed at the size it was drawn (3.5 in a column, 7.16 in across), so that their text is
/// the size the figures set it in, the same in all; one wider than the text would shrink.
pub fn report_latex(study: &str, tables: &[TableView], figures: &[FigureView]) -> String {
    let mut s = String::from(
        "\\documentclass{article}\n% the figures are PDF 1.7; pdfTeX takes them without a warning when told\n\\ifdefined\\pdfminorversion\\pdfminorversion=7\\fi\n\\ifdefined\\pdfsuppresswarningpagegroup\\pdfsuppresswarningpagegroup=1\\fi\n\\usepackage[utf8]{inputenc}\n\\usepackage[T1]{fontenc}\n\\usepackage{booktabs}\n\\usepackage{graphicx}\n% a two-column paper's text width (7.16 in): the wide figures at their drawn size\n\\usepackage[textwidth=7.2in,textheight=9in]{geometry}\n\\begin{document}\n",
    );
    s.push_str(&format!("\\section*{{{}}}\n", latex_escape(study)));
    for t in tables {
        s.push_str(&format!("\\input{{tables/{}}}\n", t.id));
    }
    for f in figures {
        s.push_str(&format!(
            "\\begin{{figure}}[htbp]\n  \\centering\n  \\resizebox{{\\ifdim\\width>\\linewidth\\linewidth\\else\\width\\fi}}{{!}}{{\\includegraphics{{figures/{}.pdf}}}}\n  \\caption{{{}. {}}}\n  \\label{{fig:{}}}\n\\end{{figure}}\n",
            f.id,
            latex_escape(&f.title),
            latex_escape(&f.caption),
            f.id
        ));
    }
    s.push_str("\\clearpage\n\\end{document}\n");
    s
}

#[cfg(test)]
mod tests {
    use super::super::tables::comparison_label;
    use super::*;

    #[test]
    fn cells_are_escaped_and_p_values_read_as_in_papers() {
        assert_eq!(
            latex_escape("a_b & 50% κ → x"),
            "a\\_b \\& 50\\% $\\kappa$ $\\rightarrow$ x"
        );
        assert_eq!(p_value("5.531e-3"), "0.00553");
        assert_eq!(p_value("0.2"), "0.200");
        assert_eq!(p_value("1.2e-7"), "$<$ 0.001");
        assert_eq!(p_value("—"), "---");
        assert_eq!(p_value("< 0.001"), "$<$ 0.001");
        assert_eq!(p_text(0.0123456), "0.0123");
        assert_eq!(p_text(0.5), "0.500");
        assert_eq!(p_text(2e-9), "< 0.001");
        assert_eq!(
            comparison_label("mww_naming_vs_expression"),
            "naming vs expression"
        );
        assert_eq!(
            comparison_label("mww_agreement_vs_disagreement"),
            "agreement vs disagreement"
        );
        let t = TableView {
            id: "time-tests".into(),
            title: "Mann-Whitney U".into(),
            note: "r = 1 − 2U/(n1·n2).".into(),
            header: vec!["comparison".into(), "U".into(), "p".into()],
            rows: vec![vec![
                "naming_vs_expression".into(),
                "12.0".into(),
                "4.2e-5".into(),
            ]],
        };
        let tex = table_latex(&t);
        assert!(tex.contains("\\begin{tabular}{lrr}"), "{tex}");
        assert!(tex.contains("\\label{tab:time-tests}"));
        assert!(
            tex.contains("naming\\_vs\\_expression & 12.0 & $<$ 0.001 \\\\"),
            "{tex}"
        );
        assert!(
            tex.contains("\\toprule") && tex.contains("\\midrule") && tex.contains("\\bottomrule")
        );
        assert!(tex.contains("$-$ 2U/(n1$\\cdot$n2)"), "{tex}");
        assert!(tex.contains("\\begin{table}[htbp]"), "{tex}");
    }

    /// Figures at their drawn size (shrunk only if wider than the text), the text as wide as
    /// the widest figure, the tables after the study's heading.
    #[test]
    fn figures_keep_their_drawn_size() {
        let f = |id: &str, wide: bool| FigureView {
            id: id.into(),
            title: "T".into(),
            caption: "C".into(),
            svg: String::new(),
            wide,
        };
        let t = TableView {
            id: "levels".into(),
            title: "L".into(),
            note: String::new(),
            header: vec!["a".into()],
            rows: vec![],
        };
        let doc = report_latex("S", &[t], &[f("narrow", false), f("wide", true)]);
        assert!(!doc.contains("width=\\linewidth"), "{doc}");
        assert!(doc.contains("\\resizebox{\\ifdim\\width>\\linewidth\\linewidth\\else\\width\\fi}{!}{\\includegraphics{figures/wide.pdf}}"), "{doc}");
        assert!(doc.contains("\\usepackage[textwidth=7.2in,textheight=9in]{geometry}"));
        assert!(doc.find("\\section*{S}") < doc.find("\\input{tables/levels}"));
    }
}
