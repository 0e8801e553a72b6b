//! Figures as SVG and PNG, drawn with plotters into memory and written
//! atomically. Text uses the DejaVu Sans font shipped in `assets/fonts/`, so
//! no system font library is needed.

pub mod design;
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
    crate::io::capture::offer_figure(stem, &encoded, &svg);
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

/// A title's font size [px].
const TITLE_FONT_PX: u32 = 20;
/// Room left free on each side of a title line [px].
const TITLE_MARGIN_PX: u32 = 10;

/// Draws `title` at the top of `root`, wrapped onto as many lines as the
/// figure's width needs (a title that says what a figure shows is long,
/// and a centred line wider than the figure loses both ends), and returns
/// the area below it.
pub fn titled<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
) -> Result<DrawingArea<DB, Shift>, String> {
    let style: TextStyle = (FONT_FAMILY, TITLE_FONT_PX).into();
    let usable = root.dim_in_pixel().0.saturating_sub(2 * TITLE_MARGIN_PX);
    let width_of = |text: &str| {
        root.estimate_text_size(text, &style)
            .map_or(u32::MAX, |(w, _)| w)
    };
    let mut area = root.clone();
    for line in wrap_title(title, width_of, usable) {
        area = area.titled(&line, style.clone()).map_err(msg)?;
    }
    Ok(area)
}

/// `title` in lines no wider than `width` by `width_of`: broken after its
/// clauses ("; ") where they fit, else between words; a single word wider
/// than `width` gets a line of its own.
fn wrap_title(title: &str, width_of: impl Fn(&str) -> u32, width: u32) -> Vec<String> {
    let clauses: Vec<&str> = title.split("; ").collect();
    let mut lines = Vec::new();
    let mut line = String::new();
    let joined = |line: &str, next: &str| {
        if line.is_empty() {
            next.to_string()
        } else {
            format!("{line} {next}")
        }
    };
    for (k, clause) in clauses.iter().enumerate() {
        let clause = if k + 1 < clauses.len() {
            format!("{clause};")
        } else {
            clause.to_string()
        };
        let with_clause = joined(&line, &clause);
        if width_of(&with_clause) <= width {
            line = with_clause;
            continue;
        }
        if !line.is_empty() {
            lines.push(std::mem::take(&mut line));
        }
        for word in clause.split(' ') {
            let with_word = joined(&line, word);
            if line.is_empty() || width_of(&with_word) <= width {
                line = with_word;
            } else {
                lines.push(std::mem::replace(&mut line, word.to_string()));
            }
        }
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_wrap_at_clauses_then_words_within_the_width() {
        let width_of = |s: &str| 10 * s.chars().count() as u32;
        let title =
            "J_e over (D, C_D) at n = 50; best D = 2000 Pa·s; white: ≈95 % confidence region";
        let lines = wrap_title(title, width_of, 300);
        assert!(lines.len() > 1, "{lines:?}");
        assert!(lines.iter().all(|l| width_of(l) <= 300), "{lines:?}");
        assert_eq!(lines.join(" "), title);
        // Clauses that fit stay whole.
        assert_eq!(lines[1], "best D = 2000 Pa·s;");
        // A short title is one line; an over-long word gets its own.
        assert_eq!(wrap_title("short", width_of, 300), vec!["short"]);
        assert_eq!(
            wrap_title("a b", width_of, 5),
            vec!["a".to_string(), "b".to_string()]
        );
    }

    /// Renders `figure` and checks that nothing is drawn in the leftmost and
    /// rightmost columns of its title rows: a title wider than the figure
    /// runs into (and past) both edges.
    pub(crate) fn assert_title_fits<F: Figure>(figure: &F) {
        register_font();
        let (w, h) = figure.size();
        let mut rgb = vec![0u8; (w * h * 3) as usize];
        {
            let root = BitMapBackend::with_buffer(&mut rgb, (w, h)).into_drawing_area();
            root.fill(&WHITE).unwrap();
            figure.draw(&root).unwrap();
            root.present().unwrap();
        }
        let title_rows = 0..60usize;
        let edge_columns = (0..4usize).chain(w as usize - 4..w as usize);
        let mut inked = 0;
        for y in title_rows {
            for x in edge_columns.clone() {
                let i = 3 * (y * w as usize + x);
                if rgb[i..i + 3].iter().any(|&c| c < 200) {
                    inked += 1;
                }
            }
        }
        let text_pixels = rgb[..3 * 30 * w as usize]
            .chunks(3)
            .filter(|p| p[0] < 128)
            .count();
        assert!(
            text_pixels > 100,
            "no title drawn ({text_pixels} dark pixels)"
        );
        assert_eq!(inked, 0, "the title reaches the figure's edge: clipped");
    }
}
