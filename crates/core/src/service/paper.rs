//! The results as a paper takes them: every table as `tables/ID.csv` (plain numbers, through
//! the neutralising writer) and `tables/ID.tex` (booktabs), every figure as `figures/ID.svg`,
//! `figures/ID.pdf` (vector, fonts embedded) and `figures/ID.png` (300 dpi), and `report.tex`
//! that inputs and includes them all — written to a folder by `natstudy report --out` and zipped
//! by the results page's download.

use natstudy_types::{FigureView, TableView};

use super::{ServiceError, ServiceResult};
use natstudy_engine::plots;

/// Print resolution of the PNGs.
pub const PNG_DPI: f32 = 300.0;

/// One table as CSV.
pub fn table_csv(t: &TableView) -> ServiceResult<Vec<u8>> {
    let mut w = super::exports::SafeCsv::new(Vec::new());
    let fail = |e: csv::Error| ServiceError::Internal(e.into());
    w.write_record(&t.header).map_err(fail)?;
    for r in &t.rows {
        w.write_record(r).map_err(fail)?;
    }
    w.into_inner().map_err(ServiceError::Internal)
}

/// A figure in one of its forms: `svg`, `pdf` or `png`.
pub fn figure_file(f: &FigureView, format: &str) -> ServiceResult<Option<Vec<u8>>> {
    let internal = |e: plots::PlotError| ServiceError::Internal(e.into());
    Ok(match format {
        "svg" => Some(f.svg.clone().into_bytes()),
        "pdf" => Some(plots::svg_to_pdf(&f.id, &f.svg).map_err(internal)?),
        "png" => Some(plots::svg_to_png(&f.id, &f.svg, PNG_DPI).map_err(internal)?),
        _ => None,
    })
}

/// Every file of the paper's bundle: (path in the bundle, bytes). CPU work: call it off the
/// async threads.
pub fn files(
    study: &str,
    tables: &[TableView],
    figures: &[FigureView],
) -> ServiceResult<Vec<(String, Vec<u8>)>> {
    let mut out = Vec::new();
    for t in tables {
        out.push((format!("tables/{}.csv", t.id), table_csv(t)?));
        out.push((
            format!("tables/{}.tex", t.id),
            crate::present::latex::table_latex(t).into_bytes(),
        ));
    }
    for f in figures {
        for format in ["svg", "pdf", "png"] {
            if let Some(bytes) = figure_file(f, format)? {
                out.push((format!("figures/{}.{format}", f.id), bytes));
            }
        }
    }
    out.push((
        "report.tex".to_owned(),
        crate::present::latex::report_latex(study, tables, figures).into_bytes(),
    ));
    Ok(out)
}

/// The bundle as a zip (deflated).
pub fn zip(files: &[(String, Vec<u8>)]) -> ServiceResult<Vec<u8>> {
    use std::io::Write;
    let internal = |e: zip::result::ZipError| ServiceError::Internal(e.into());
    let mut z = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for (path, bytes) in files {
        z.start_file(path.as_str(), options).map_err(internal)?;
        z.write_all(bytes)
            .map_err(|e| ServiceError::Internal(e.into()))?;
    }
    Ok(z.finish().map_err(internal)?.into_inner())
}
