//! Figures as SVG and PNG, drawn with plotters into memory and written
//! atomically. Text uses the DejaVu Sans font shipped in `assets/fonts/`, so
//! no system font library is needed.

pub mod identify;
pub mod linear;
pub mod series;
pub mod swingup;

use std::io::Write;
use std::path::Path;
use std::sync::Once;

use plotters::coord::Shift;
use plotters::prelude::*;
use thiserror::Error;

use crate::io::{IoError, PendingFile};

#[derive(Debug, Error)]
pub enum PlotError {
    #[error("drawing {path}: {message}")]
    Draw { path: String, message: String },
    #[error(transparent)]
    Io(#[from] IoError),
}

const FONT: &[u8] = include_bytes!("../assets/fonts/DejaVuSans.ttf");
pub const FONT_FAMILY: &str = "sans-serif";

fn register_font() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // The font is compiled in; failing to parse it is a build defect.
        plotters::style::register_font(FONT_FAMILY, FontStyle::Normal, FONT)
            .unwrap_or_else(|_| panic!("bundled font does not parse"));
    });
}

/// A figure that can draw itself on any plotters backend.
pub trait Figure {
    fn size(&self) -> (u32, u32) {
        (1000, 700)
    }
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String>;
}

/// Draws `figure` into `stem.svg` and `stem.png`.
pub fn save<F: Figure>(stem: &Path, figure: &F) -> Result<(), PlotError> {
    let size = figure.size();
    register_font();
    let svg_path = stem.with_extension("svg");
    let draw_err = |path: &Path, message: String| PlotError::Draw {
        path: path.display().to_string(),
        message,
    };
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        root.fill(&WHITE)
            .map_err(|e| draw_err(&svg_path, e.to_string()))?;
        figure.draw(&root).map_err(|m| draw_err(&svg_path, m))?;
        root.present()
            .map_err(|e| draw_err(&svg_path, e.to_string()))?;
    }
    write_bytes(&svg_path, svg.as_bytes())?;

    let png_path = stem.with_extension("png");
    let mut rgb = vec![0u8; (size.0 * size.1 * 3) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, size).into_drawing_area();
        root.fill(&WHITE)
            .map_err(|e| draw_err(&png_path, e.to_string()))?;
        figure.draw(&root).map_err(|m| draw_err(&png_path, m))?;
        root.present()
            .map_err(|e| draw_err(&png_path, e.to_string()))?;
    }
    let mut encoded = Vec::new();
    {
        let mut encoder = png::Encoder::new(&mut encoded, size.0, size.1);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        let mut writer = encoder
            .write_header()
            .map_err(|e| draw_err(&png_path, e.to_string()))?;
        writer
            .write_image_data(&rgb)
            .map_err(|e| draw_err(&png_path, e.to_string()))?;
    }
    write_bytes(&png_path, &encoded)?;
    Ok(())
}

fn write_bytes(path: &Path, bytes: &[u8]) -> Result<(), IoError> {
    let mut pending = PendingFile::create(path)?;
    pending
        .file()
        .write_all(bytes)
        .map_err(|source| IoError::Write {
            path: path.to_owned(),
            error: source,
        })?;
    pending.commit()
}

/// Maps any drawing error to a message.
pub fn msg<E: std::fmt::Display>(e: E) -> String {
    e.to_string()
}

/// The legend of every figure: framed, on a translucent white ground, at
/// `position`.
pub fn draw_legend<'a, DB: DrawingBackend + 'a, CT: plotters::coord::CoordTranslate>(
    chart: &mut ChartContext<'a, DB, CT>,
    position: SeriesLabelPosition,
) -> Result<(), String> {
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .label_font((FONT_FAMILY, 14))
        .position(position)
        .draw()
        .map_err(msg)
}

pub const PALETTE: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
];
