//! A figure's other forms: PNG at a print resolution and a one-page vector PDF, both drawn with
//! the bundled font (DejaVu Sans, shipped with natstudy so they look the same on every machine;
//! see `assets/fonts/DejaVuSans-LICENSE.txt`) — the PDF embeds it, as journals ask.

use super::PlotError;

static FONT: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans.ttf");

fn fonts() -> std::sync::Arc<resvg::usvg::fontdb::Database> {
    static DB: std::sync::OnceLock<std::sync::Arc<resvg::usvg::fontdb::Database>> =
        std::sync::OnceLock::new();
    DB.get_or_init(|| {
        let mut db = resvg::usvg::fontdb::Database::new();
        db.load_font_data(FONT.to_vec());
        db.set_sans_serif_family("DejaVu Sans");
        db.set_serif_family("DejaVu Sans");
        db.set_monospace_family("DejaVu Sans");
        std::sync::Arc::new(db)
    })
    .clone()
}

fn tree(name: &str, svg: &str) -> Result<resvg::usvg::Tree, PlotError> {
    let options = resvg::usvg::Options {
        fontdb: fonts(),
        font_family: "DejaVu Sans".into(),
        ..Default::default()
    };
    resvg::usvg::Tree::from_str(svg, &options).map_err(|e| super::err(name)(e.to_string()))
}

/// A figure's SVG as a PNG at `dpi` dots per inch of its print size (300 for print; the SVG's
/// size in CSS pixels is 96 to the inch).
pub fn svg_to_png(name: &str, svg: &str, dpi: f32) -> Result<Vec<u8>, PlotError> {
    let fail = super::err(name);
    let tree = tree(name, svg)?;
    let scale = dpi / 96.0;
    // rounded from the exact size: 7.16 in at 300 dpi is 2,148 pixels
    let (w, h) = (
        (tree.size().width() * scale).round() as u32,
        (tree.size().height() * scale).round() as u32,
    );
    let mut pixmap =
        resvg::tiny_skia::Pixmap::new(w, h).ok_or_else(|| fail("empty chart".into()))?;
    pixmap.fill(resvg::tiny_skia::Color::WHITE);
    resvg::render(
        &tree,
        resvg::tiny_skia::Transform::from_scale(scale, scale),
        &mut pixmap.as_mut(),
    );
    // opaque on white: RGB, deflated hard (a sixth of tiny-skia's fast RGBA file)
    let rgb: Vec<u8> = pixmap
        .pixels()
        .iter()
        .flat_map(|p| [p.red(), p.green(), p.blue()])
        .collect();
    let mut out = Vec::new();
    {
        let mut encoder = png::Encoder::new(&mut out, pixmap.width(), pixmap.height());
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        encoder.set_compression(png::Compression::Best);
        encoder.set_adaptive_filter(png::AdaptiveFilterType::Adaptive);
        // 300 dpi in the file, so that documents place it at its print size
        let dpm = (dpi / 0.0254).round() as u32;
        encoder.set_pixel_dims(Some(png::PixelDimensions {
            xppu: dpm,
            yppu: dpm,
            unit: png::Unit::Meter,
        }));
        let mut writer = encoder.write_header().map_err(|e| fail(e.to_string()))?;
        writer
            .write_image_data(&rgb)
            .map_err(|e| fail(e.to_string()))?;
    }
    Ok(out)
}

/// A figure's SVG as a one-page PDF of its print size, text as text in the embedded font.
pub fn svg_to_pdf(name: &str, svg: &str) -> Result<Vec<u8>, PlotError> {
    let tree = tree(name, svg)?;
    svg2pdf::to_pdf(
        &tree,
        svg2pdf::ConversionOptions::default(),
        svg2pdf::PageOptions { dpi: 96.0 },
    )
    .map_err(|e| super::err(name)(e.to_string()))
}
