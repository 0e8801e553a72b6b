//! General figures: stacked line-chart panels sharing an x axis, tether
//! shape snapshots, and a heat map over a grid.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::colors::colormaps::ViridisRGB;

use super::{FONT_FAMILY, Figure, PALETTE, draw_legend, msg, titled};

/// One line of a panel.
pub struct Series {
    pub name: String,
    /// The line's points; a point with a non-finite y breaks the line there
    /// (the parts of a curve that leave a zoomed panel).
    pub points: Vec<(f64, f64)>,
    /// Drawn thin and pale: a reference line rather than a result.
    pub faint: bool,
    /// Each point also drawn as a dot: a few values, each a result.
    pub dots: bool,
}

impl Series {
    pub fn new(name: impl Into<String>, points: Vec<(f64, f64)>) -> Self {
        Self {
            name: name.into(),
            points,
            faint: false,
            dots: false,
        }
    }
}

pub struct Panel {
    pub y_label: String,
    pub series: Vec<Series>,
    /// x positions marked by a vertical line (e.g. the time of capture).
    pub marks: Vec<(String, f64)>,
    /// Its own x range, where it zooms on part of the shared axis (None:
    /// the range of every panel's points).
    pub x_range: Option<(f64, f64)>,
}

/// Panels stacked vertically over one x axis.
pub struct Panels {
    pub title: String,
    pub x_label: String,
    pub panels: Vec<Panel>,
}

/// Tick labels with as many digits as the axis's range needs to tell its
/// ticks apart (a J_e profile spans 2.65e-4 to 2.82e-4 m²: three digits of
/// "0.00027" are not enough), in scientific notation for very small or
/// large values.
fn tick_format(lo: f64, hi: f64) -> impl Fn(&f64) -> String {
    let magnitude = lo.abs().max(hi.abs());
    let span = (hi - lo)
        .abs()
        .max(magnitude * 1e-12)
        .max(f64::MIN_POSITIVE);
    let scientific = magnitude > 0.0 && !(1e-2..1e5).contains(&magnitude);
    // Significant digits: the span's first digit and one more.
    let digits = ((magnitude / span).log10().ceil().max(0.0) as usize + 2).min(8);
    move |v: &f64| {
        if scientific {
            format!("{:.*e}", digits.saturating_sub(1), v)
        } else {
            let decimals = (digits as f64 - magnitude.log10().floor() - 1.0).max(0.0) as usize;
            // 10, not 10.0; 0.85, not 0.850.
            let text = format!("{:.*}", decimals.min(8), v);
            let text = if text.contains('.') {
                text.trim_end_matches('0').trim_end_matches('.').to_string()
            } else {
                text
            };
            // A tick a rounding below zero reads 0, not -0.
            if text == "-0" { "0".to_string() } else { text }
        }
    }
}

fn range(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = values
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    let pad = ((hi - lo) * 0.05).max(1e-9 * hi.abs().max(1.0));
    (lo - pad, hi + pad)
}

impl Figure for Panels {
    fn size(&self) -> (u32, u32) {
        (1000, 260 + 260 * self.panels.len() as u32)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let root = titled(root, &self.title)?;
        let areas = root.split_evenly((self.panels.len(), 1));
        let (x_lo, x_hi) = range(
            self.panels
                .iter()
                .flat_map(|p| p.series.iter().flat_map(|s| s.points.iter().map(|q| q.0))),
        );
        for (panel, area) in self.panels.iter().zip(&areas) {
            let (x_lo, x_hi) = panel.x_range.unwrap_or((x_lo, x_hi));
            let (y_lo, y_hi) = range(
                panel
                    .series
                    .iter()
                    .flat_map(|s| s.points.iter().map(|q| q.1)),
            );
            let mut chart = ChartBuilder::on(area)
                .margin(10)
                .x_label_area_size(40)
                .y_label_area_size(80)
                .build_cartesian_2d(x_lo..x_hi, y_lo..y_hi)
                .map_err(msg)?;
            let y_format = tick_format(y_lo, y_hi);
            let x_format = tick_format(x_lo, x_hi);
            chart
                .configure_mesh()
                .x_desc(self.x_label.as_str())
                .y_desc(panel.y_label.as_str())
                .x_label_formatter(&x_format)
                .y_label_formatter(&y_format)
                .label_style((FONT_FAMILY, 15))
                .draw()
                .map_err(msg)?;
            // Each mark in a colour of its own after the series' (two marks
            // at one x, a grid's best and its refinement, stay apart: the
            // second is dashed over the first), so the legend tells them
            // apart.
            for (k, (label, x)) in panel.marks.iter().enumerate() {
                let color = PALETTE[(panel.series.len() + k) % PALETTE.len()];
                let style = color.stroke_width(2);
                let line = [(*x, y_lo), (*x, y_hi)];
                let drawn = if k % 2 == 0 {
                    chart.draw_series(LineSeries::new(line, style))
                } else {
                    chart.draw_series(DashedLineSeries::new(line, 8, 6, style))
                };
                drawn
                    .map_err(msg)?
                    .label(label.as_str())
                    .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], style));
            }
            for (k, s) in panel.series.iter().enumerate() {
                let color = PALETTE[k % PALETTE.len()];
                let style = if s.faint {
                    color.mix(0.5).stroke_width(1)
                } else {
                    color.stroke_width(2)
                };
                for (piece, points) in s
                    .points
                    .split(|p| !p.1.is_finite())
                    .filter(|piece| !piece.is_empty())
                    .enumerate()
                {
                    let drawn = chart
                        .draw_series(LineSeries::new(points.iter().copied(), style))
                        .map_err(msg)?;
                    if piece == 0 {
                        drawn
                            .label(s.name.as_str())
                            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], style));
                    }
                }
                if s.dots {
                    chart
                        .draw_series(
                            s.points
                                .iter()
                                .filter(|p| p.1.is_finite())
                                .map(|&p| Circle::new(p, 4, color.filled())),
                        )
                        .map_err(msg)?;
                }
            }
            draw_legend(&mut chart, SeriesLabelPosition::UpperRight)?;
        }
        Ok(())
    }
}

/// One tether shape of a [`Snapshots`] figure.
pub struct Shape {
    pub label: String,
    /// The shape through its markers, drawn as a line.
    pub line: Vec<(f64, f64)>,
    /// Measured points of the same instant, drawn as crosses.
    pub points: Vec<(f64, f64)>,
    /// A second shape of the same instant drawn dashed (empty: none).
    pub dashed: Vec<(f64, f64)>,
    /// The pin or winch, drawn as a dot.
    pub pin: (f64, f64),
}

/// Tether shapes at several times, drawn to scale (equal axes), from pale
/// (early) to dark (late).
pub struct Snapshots {
    pub title: String,
    pub shapes: Vec<Shape>,
}

impl Figure for Snapshots {
    fn size(&self) -> (u32, u32) {
        (1000, 800)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let points = || {
            self.shapes.iter().flat_map(|s| {
                s.line
                    .iter()
                    .chain(&s.points)
                    .chain(std::iter::once(&s.pin))
            })
        };
        let (x_lo, x_hi) = range(points().map(|p| p.0));
        let (y_lo, y_hi) = range(points().map(|p| p.1));
        // Equal scales: widen the narrower axis to the figure's aspect.
        let (w, h) = (880.0, 680.0);
        let scale = ((x_hi - x_lo) / w).max((y_hi - y_lo) / h);
        let (xc, yc) = ((x_lo + x_hi) / 2.0, (y_lo + y_hi) / 2.0);
        let (xr, yr) = (scale * w / 2.0, scale * h / 2.0);
        let root = titled(root, &self.title)?;
        let mut chart = ChartBuilder::on(&root)
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d((xc - xr)..(xc + xr), (yc - yr)..(yc + yr))
            .map_err(msg)?;
        chart
            .configure_mesh()
            .x_desc("x [m]")
            .y_desc("y [m]")
            .label_style((FONT_FAMILY, 15))
            .draw()
            .map_err(msg)?;
        let count = self.shapes.len().max(2) - 1;
        for (k, shape) in self.shapes.iter().enumerate() {
            // Each instant in its own colour along viridis (stopping short of
            // its pale yellow end), early dark to late light.
            let shade = 0.25 + 0.75 * k as f64 / count as f64;
            let color = ViridisRGB::get_color(0.85 * k as f64 / count as f64).to_rgba();
            chart
                .draw_series(LineSeries::new(
                    shape.line.iter().copied(),
                    color.stroke_width(2),
                ))
                .map_err(msg)?
                .label(shape.label.as_str())
                .legend(move |(x, y)| {
                    PathElement::new([(x, y), (x + 20, y)], color.stroke_width(2))
                });
            if !shape.dashed.is_empty() {
                chart
                    .draw_series(DashedLineSeries::new(
                        shape.dashed.iter().copied(),
                        6,
                        4,
                        RGBColor(110, 110, 110).stroke_width(1),
                    ))
                    .map_err(msg)?;
            }
            chart
                .draw_series(
                    shape
                        .points
                        .iter()
                        // The measured markers in their instant's colour.
                        .map(|&p| Cross::new(p, 5, color.stroke_width(2))),
                )
                .map_err(msg)?;
            let mut dots = vec![Circle::new(shape.pin, 4, PALETTE[1].mix(shade).filled())];
            if let Some(&end) = shape.line.last() {
                dots.push(Circle::new(end, 4, BLACK.mix(shade).filled()));
            }
            chart.draw_series(dots).map_err(msg)?;
        }
        draw_legend(&mut chart, SeriesLabelPosition::LowerRight)?;
        Ok(())
    }
}

/// A value over a regular grid of (x, y), as coloured cells with a colour
/// bar; missing values (diverged) are grey.
pub struct Heatmap {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub value_label: String,
    pub x_values: Vec<f64>,
    pub y_values: Vec<f64>,
    /// values[iy * x_values.len() + ix]
    pub values: Vec<Option<f64>>,
    /// A point to ring (the optimum).
    pub marker: Option<(f64, f64)>,
    /// Outline the cells whose value is at most this (a confidence
    /// region's boundary, in the values' units).
    pub region_at_most: Option<f64>,
}

/// Viridis, sampled at five points and interpolated linearly.
pub fn viridis(u: f64) -> RGBColor {
    const STOPS: [(f64, f64, f64); 5] = [
        (68.0, 1.0, 84.0),
        (59.0, 82.0, 139.0),
        (33.0, 145.0, 140.0),
        (94.0, 201.0, 98.0),
        (253.0, 231.0, 37.0),
    ];
    let u = if u.is_finite() {
        u.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let s = u * (STOPS.len() - 1) as f64;
    let i = (s.floor() as usize).min(STOPS.len() - 2);
    let f = s - i as f64;
    let (a, b) = (STOPS[i], STOPS[i + 1]);
    let mix = |p: f64, q: f64| (p + (q - p) * f).round() as u8;
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

/// Cell edges around sorted centres (half-way between neighbours).
fn edges(centres: &[f64]) -> Vec<f64> {
    match centres.len() {
        0 => vec![0.0, 1.0],
        1 => vec![centres[0] - 0.5, centres[0] + 0.5],
        n => {
            let mut e = Vec::with_capacity(n + 1);
            e.push(centres[0] - (centres[1] - centres[0]) / 2.0);
            e.extend(centres.windows(2).map(|w| (w[0] + w[1]) / 2.0));
            e.push(centres[n - 1] + (centres[n - 1] - centres[n - 2]) / 2.0);
            e
        }
    }
}

impl Heatmap {
    /// The confidence region's boundary: each edge between a cell inside
    /// (J_e at most `limit`) and one outside, or the map's border.
    fn region_edges(&self, limit: f64, xe: &[f64], ye: &[f64]) -> Vec<[(f64, f64); 2]> {
        let nx = self.x_values.len();
        let ny = self.y_values.len();
        let inside = |ix: usize, iy: usize| self.values[iy * nx + ix].is_some_and(|v| v <= limit);
        let mut edges = Vec::new();
        for iy in 0..ny {
            for ix in 0..nx {
                if !inside(ix, iy) {
                    continue;
                }
                let (x0, x1, y0, y1) = (xe[ix], xe[ix + 1], ye[iy], ye[iy + 1]);
                if ix == 0 || !inside(ix - 1, iy) {
                    edges.push([(x0, y0), (x0, y1)]);
                }
                if ix + 1 == nx || !inside(ix + 1, iy) {
                    edges.push([(x1, y0), (x1, y1)]);
                }
                if iy == 0 || !inside(ix, iy - 1) {
                    edges.push([(x0, y0), (x1, y0)]);
                }
                if iy + 1 == ny || !inside(ix, iy + 1) {
                    edges.push([(x0, y1), (x1, y1)]);
                }
            }
        }
        edges
    }

    /// The colour scale from `lo` to `hi` beside the map.
    fn draw_colour_bar<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        (lo, hi): (f64, f64),
    ) -> Result<(), String> {
        let mut bar = ChartBuilder::on(area)
            .margin(10)
            .margin_left(0)
            .x_label_area_size(45)
            .y_label_area_size(70)
            .build_cartesian_2d(0.0..1.0, lo..hi)
            .map_err(msg)?;
        bar.configure_mesh()
            .disable_mesh()
            .disable_x_axis()
            .y_desc(self.value_label.as_str())
            .label_style((FONT_FAMILY, 13))
            .draw()
            .map_err(msg)?;
        let steps = 100;
        bar.draw_series((0..steps).map(|i| {
            let a = lo + (hi - lo) * i as f64 / steps as f64;
            let b = lo + (hi - lo) * (i + 1) as f64 / steps as f64;
            Rectangle::new(
                [(0.0, a), (1.0, b)],
                viridis(i as f64 / (steps - 1) as f64).filled(),
            )
        }))
        .map_err(msg)?;
        Ok(())
    }
}

impl Figure for Heatmap {
    fn size(&self) -> (u32, u32) {
        (1000, 800)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let root = titled(root, &self.title)?;
        let (map_area, bar_area) = root.split_horizontally(860);
        let (lo, hi) = self
            .values
            .iter()
            .flatten()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
                (lo.min(v), hi.max(v))
            });
        let (lo, hi) = if lo.is_finite() {
            (lo, if hi > lo { hi } else { lo + 1.0 })
        } else {
            (0.0, 1.0)
        };
        let xe = edges(&self.x_values);
        let ye = edges(&self.y_values);
        let mut chart = ChartBuilder::on(&map_area)
            .margin(10)
            .x_label_area_size(45)
            .y_label_area_size(70)
            .build_cartesian_2d(xe[0]..xe[xe.len() - 1], ye[0]..ye[ye.len() - 1])
            .map_err(msg)?;
        // 500, not 500.0; 0.85, not 0.850.
        let x_format = tick_format(xe[0], xe[xe.len() - 1]);
        let y_format = tick_format(ye[0], ye[ye.len() - 1]);
        chart
            .configure_mesh()
            .disable_mesh()
            .x_desc(self.x_label.as_str())
            .y_desc(self.y_label.as_str())
            .x_label_formatter(&x_format)
            .y_label_formatter(&y_format)
            .label_style((FONT_FAMILY, 15))
            .draw()
            .map_err(msg)?;
        let nx = self.x_values.len();
        chart
            .draw_series(self.values.iter().enumerate().map(|(k, v)| {
                let (ix, iy) = (k % nx, k / nx);
                let color = match v {
                    Some(v) => viridis((v - lo) / (hi - lo)),
                    None => RGBColor(160, 160, 160),
                };
                Rectangle::new([(xe[ix], ye[iy]), (xe[ix + 1], ye[iy + 1])], color.filled())
            }))
            .map_err(msg)?;
        if let Some(limit) = self.region_at_most {
            chart
                .draw_series(
                    self.region_edges(limit, &xe, &ye)
                        .into_iter()
                        .map(|e| PathElement::new(e.to_vec(), WHITE.stroke_width(3))),
                )
                .map_err(msg)?;
        }
        if let Some(p) = self.marker {
            chart
                .draw_series([
                    Circle::new(p, 9, WHITE.stroke_width(3)),
                    Circle::new(p, 9, RED.stroke_width(1)),
                ])
                .map_err(msg)?;
        }
        self.draw_colour_bar(&bar_area, (lo, hi))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::tick_format;

    #[test]
    fn ticks_carry_the_digits_their_range_needs_and_no_negative_zero() {
        let f = tick_format(-0.6, 0.0);
        assert_eq!(f(&-0.6), "-0.6");
        assert_eq!(f(&-0.1), "-0.1");
        // What the axis puts at its top: zero from a sum a rounding below.
        assert_eq!(f(&-1e-17), "0");
        assert_eq!(f(&0.0), "0");
        let profile = tick_format(2.65e-4, 2.82e-4);
        assert_ne!(profile(&2.70e-4), profile(&2.72e-4));
    }
}
