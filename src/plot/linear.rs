//! Figures of the linearized model: Bode diagram and mode shapes.

use nalgebra::Complex;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::{FONT_FAMILY, Figure, PALETTE, draw_legend, msg, titled};

/// Magnitude and phase of winch-to-output gains against frequency, with the
/// natural frequencies marked.
pub struct BodePlot {
    pub title: String,
    pub frequencies_hz: Vec<f64>,
    /// (output name, gain per unit winch displacement at each frequency)
    pub responses: Vec<(String, Vec<Complex<f64>>)>,
    pub natural_frequencies_hz: Vec<f64>,
}

impl Figure for BodePlot {
    fn size(&self) -> (u32, u32) {
        (1000, 800)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        // An output with no linear response (the tip's vertical motion is
        // second order in the winch motion) would only draw round-off.
        let largest = |g: &[Complex<f64>]| g.iter().fold(0.0f64, |m, z| m.max(z.norm()));
        let overall = self
            .responses
            .iter()
            .fold(0.0f64, |m, (_, g)| m.max(largest(g)));
        let (shown, silent): (Vec<_>, Vec<_>) = self
            .responses
            .iter()
            .partition(|(_, g)| largest(g) > 1e-6 * overall);
        let mut title = self.title.clone();
        for (name, _) in &silent {
            title.push_str(&format!("; {name}: no linear response"));
        }
        let root = titled(root, &title)?;
        let (top, bottom) = root.split_vertically(440);
        let f_min = self.frequencies_hz.first().copied().unwrap_or(0.1);
        let f_max = self.frequencies_hz.last().copied().unwrap_or(100.0);
        let magnitudes = shown
            .iter()
            .flat_map(|(_, g)| g.iter().map(|z| z.norm()))
            .filter(|m| *m > 0.0);
        let (lo, hi) = magnitudes.fold((f64::INFINITY, 0.0f64), |(lo, hi), m| {
            (lo.min(m), hi.max(m))
        });
        // Keep ten decades at most: the y response is tiny far from resonance.
        let lo = lo.max(hi * 1e-10).min(0.5);
        let mut mag = ChartBuilder::on(&top)
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(80)
            .build_cartesian_2d((f_min..f_max).log_scale(), (lo..hi * 2.0).log_scale())
            .map_err(msg)?;
        mag.configure_mesh()
            .x_desc("frequency [Hz]")
            .y_desc("|tip / winch| [m/m]")
            .label_style((FONT_FAMILY, 15))
            .draw()
            .map_err(msg)?;
        let mut phase = ChartBuilder::on(&bottom)
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(80)
            .build_cartesian_2d((f_min..f_max).log_scale(), -180.0..180.0)
            .map_err(msg)?;
        phase
            .configure_mesh()
            .x_desc("frequency [Hz]")
            .y_desc("phase [deg]")
            .y_labels(9)
            .label_style((FONT_FAMILY, 15))
            .draw()
            .map_err(msg)?;
        for &f in self
            .natural_frequencies_hz
            .iter()
            .filter(|f| (f_min..=f_max).contains(*f))
        {
            let style = ShapeStyle::from(&BLACK.mix(0.25)).stroke_width(1);
            mag.draw_series(LineSeries::new([(f, lo), (f, hi * 2.0)], style))
                .map_err(msg)?;
            phase
                .draw_series(LineSeries::new([(f, -180.0), (f, 180.0)], style))
                .map_err(msg)?;
        }
        for (k, (name, gains)) in shown.iter().enumerate() {
            let color = PALETTE[k % PALETTE.len()];
            let points = self.frequencies_hz.iter().zip(gains);
            mag.draw_series(LineSeries::new(
                points.clone().map(|(&f, g)| (f, g.norm().max(lo))),
                color.stroke_width(2),
            ))
            .map_err(msg)?
            .label(name.as_str())
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], color.stroke_width(2)));
            phase
                .draw_series(LineSeries::new(
                    points.map(|(&f, g)| (f, g.arg().to_degrees())),
                    color.stroke_width(2),
                ))
                .map_err(msg)?;
        }
        draw_legend(&mut mag, SeriesLabelPosition::MiddleRight)?;
        Ok(())
    }
}

/// Lateral deflection of the first modes along the hanging tether.
pub struct ModeShapePlot {
    pub title: String,
    /// (label, points (lateral deflection, height)) per mode
    pub modes: Vec<(String, Vec<(f64, f64)>)>,
}

impl Figure for ModeShapePlot {
    fn size(&self) -> (u32, u32) {
        (800, 800)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let all = self.modes.iter().flat_map(|(_, p)| p.iter());
        let (y_min, y_max) = all.fold((0.0f64, 0.0f64), |(lo, hi), p| (lo.min(p.1), hi.max(p.1)));
        let root = titled(root, &self.title)?;
        let mut chart = ChartBuilder::on(&root)
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d(-1.1..1.1, (y_min - 0.02)..(y_max + 0.02))
            .map_err(msg)?;
        chart
            .configure_mesh()
            .x_desc("lateral deflection (normalised)")
            .y_desc("height [m]")
            .label_style((FONT_FAMILY, 15))
            .draw()
            .map_err(msg)?;
        for (k, (label, points)) in self.modes.iter().enumerate() {
            let color = PALETTE[k % PALETTE.len()];
            chart
                .draw_series(LineSeries::new(
                    points.iter().copied(),
                    color.stroke_width(2),
                ))
                .map_err(msg)?
                .label(label.as_str())
                .legend(move |(x, y)| {
                    PathElement::new([(x, y), (x + 20, y)], color.stroke_width(2))
                });
        }
        draw_legend(&mut chart, SeriesLabelPosition::LowerRight)?;
        Ok(())
    }
}
