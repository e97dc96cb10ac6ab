//! Plots as inline SVG: line charts with spread bands, and scatter plots.

use std::fmt::Write;

/// Colours of the series, in order.
pub const PALETTE: [&str; 10] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
    "#bcbd22", "#17becf",
];

/// Dash patterns that tell apart lines of one colour (prompt styles, rounds).
pub const DASHES: [&str; 4] = ["", "7 4", "2 3", "9 3 2 3"];

/// One line of a chart.
#[derive(Clone, Debug, Default)]
pub struct Series {
    /// Legend text.
    pub name: String,
    /// (x, y) points in x order.
    pub points: Vec<(f64, f64)>,
    /// What a reader sees on hovering each point (its n, say), aligned with `points`.
    pub tips: Vec<String>,
    /// (x, low, high) of the band, in x order.
    pub band: Vec<(f64, f64, f64)>,
    /// Index into [`PALETTE`]: one colour per model across every chart.
    pub colour: usize,
    /// Index into [`DASHES`].
    pub dash: usize,
}

/// A line chart.
#[derive(Clone, Debug, Default)]
pub struct LineChart {
    /// Title above the plot.
    pub title: String,
    /// Label of the x axis.
    pub x_label: String,
    /// Label of the y axis.
    pub y_label: String,
    /// Lowest and highest y shown.
    pub y_range: (f64, f64),
    /// What the shaded bands are, shown under the title when there are any.
    pub band_label: Option<String>,
    /// Lines.
    pub series: Vec<Series>,
}

const W: f64 = 600.0;
const H: f64 = 320.0;
const LEFT: f64 = 62.0;
const RIGHT: f64 = 12.0;
const TOP: f64 = 26.0;
const BOTTOM: f64 = 40.0;

/// Escapes text for HTML and SVG.
pub fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

struct Frame {
    x0: f64,
    x1: f64,
    y0: f64,
    y1: f64,
}

impl Frame {
    fn x(&self, v: f64) -> f64 {
        let span = (self.x1 - self.x0).max(1e-9);
        LEFT + (v - self.x0) / span * (W - LEFT - RIGHT)
    }
    fn y(&self, v: f64) -> f64 {
        let span = (self.y1 - self.y0).max(1e-9);
        H - BOTTOM - (v.clamp(self.y0, self.y1) - self.y0) / span * (H - TOP - BOTTOM)
    }
}

fn nice_step(span: f64, target: f64) -> f64 {
    let raw = (span / target).max(1e-9);
    let mag = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag)
}

/// Labels of both axes.
struct AxisLabels<'a> {
    x: &'a str,
    y: &'a str,
}

fn axes(out: &mut String, f: &Frame, title: &str, labels: AxisLabels, integer_x: bool, extra: f64) {
    let total = H + extra;
    // The chart scales to its container's width; the view box keeps its proportions.
    let _ = write!(
        out,
        r##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {total}" width="100%" font-family="sans-serif" font-size="11"><text x="{}" y="16" text-anchor="middle" font-size="13" font-weight="bold">{}</text>"##,
        W / 2.0,
        escape(title)
    );
    if !labels.y.is_empty() {
        let _ = write!(
            out,
            r##"<text transform="translate(13,{}) rotate(-90)" text-anchor="middle">{}</text>"##,
            (TOP + H - BOTTOM) / 2.0,
            escape(labels.y)
        );
    }
    let ystep = nice_step(f.y1 - f.y0, 10.0);
    let mut v = (f.y0 / ystep).ceil() * ystep;
    while v <= f.y1 + 1e-9 {
        let y = f.y(v);
        let _ = write!(
            out,
            r##"<line x1="{LEFT}" x2="{}" y1="{y:.1}" y2="{y:.1}" stroke="#ddd"/><text x="{}" y="{:.1}" text-anchor="end">{}</text>"##,
            W - RIGHT,
            LEFT - 4.0,
            y + 4.0,
            trim(v)
        );
        v += ystep;
    }
    let mut xstep = nice_step(f.x1 - f.x0, 8.0);
    if integer_x {
        xstep = xstep.max(1.0).round();
    }
    let mut v = (f.x0 / xstep).ceil() * xstep;
    while v <= f.x1 + 1e-9 {
        let x = f.x(v);
        let _ = write!(
            out,
            r##"<line x1="{x:.1}" x2="{x:.1}" y1="{}" y2="{}" stroke="#999"/><text x="{x:.1}" y="{}" text-anchor="middle">{}</text>"##,
            H - BOTTOM,
            H - BOTTOM + 4.0,
            H - BOTTOM + 15.0,
            trim(v)
        );
        v += xstep;
    }
    let _ = write!(
        out,
        r##"<rect x="{LEFT}" y="{TOP}" width="{}" height="{}" fill="none" stroke="#999"/><text x="{}" y="{}" text-anchor="middle">{}</text>"##,
        W - LEFT - RIGHT,
        H - TOP - BOTTOM,
        (LEFT + W - RIGHT) / 2.0,
        H - 6.0,
        escape(labels.x)
    );
}

fn trim(v: f64) -> String {
    // A tick at zero reached by adding steps can be -0.0000…1: it is 0.
    let v = if v.abs() < 1e-9 { 0.0 } else { v };
    let s = format!("{v:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

impl LineChart {
    /// The chart as an `<svg>` element.
    pub fn render(&self) -> String {
        let xs = self
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.0));
        let (mut x0, mut x1) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
            (a.min(x), b.max(x))
        });
        if !x0.is_finite() {
            (x0, x1) = (0.0, 1.0);
        }
        if x1 <= x0 {
            x1 = x0 + 1.0;
        }
        let f = Frame {
            x0,
            x1,
            y0: self.y_range.0,
            y1: self.y_range.1,
        };
        let mut out = String::new();
        let band_label = self
            .band_label
            .as_ref()
            .filter(|_| self.series.iter().any(|s| s.band.len() >= 2));
        let mut names: Vec<String> = self.series.iter().map(|s| s.name.clone()).collect();
        names.extend(band_label.cloned());
        let rows = legend_rows(&names);
        axes(
            &mut out,
            &f,
            &self.title,
            AxisLabels {
                x: &self.x_label,
                y: &self.y_label,
            },
            true,
            14.0 * rows.len() as f64 + 8.0,
        );
        if self.y_range.0 < 0.0 && self.y_range.1 > 0.0 {
            let y = f.y(0.0);
            let _ = write!(
                out,
                r##"<line x1="{LEFT}" x2="{}" y1="{y:.1}" y2="{y:.1}" stroke="#555"/>"##,
                W - RIGHT
            );
        }
        // Solid lines first and wide, dashed ones on top and narrow: series
        // that coincide stay visible as a dashed line over a solid one.
        let mut order: Vec<&Series> = self.series.iter().collect();
        order.sort_by_key(|s| s.dash);
        for s in order {
            draw_series(&mut out, &f, s);
        }
        self.draw_legend(&mut out, &rows);
        out.push_str("</svg>");
        out
    }

    /// Draws the legend's `rows` under the plot: a series by its line, the band by a swatch.
    fn draw_legend(&self, out: &mut String, rows: &[Vec<(usize, f64, String)>]) {
        for (row, entries) in rows.iter().enumerate() {
            let y = H + 8.0 + 14.0 * row as f64;
            for (i, x, name) in entries {
                let Some(s) = self.series.get(*i) else {
                    // The band's own entry, after the series.
                    let _ = write!(
                        out,
                        r##"<rect x="{x:.1}" y="{:.1}" width="22" height="10" fill="#777" fill-opacity="0.25"/><text x="{:.1}" y="{y:.1}">{}</text>"##,
                        y - 9.0,
                        x + 26.0,
                        escape(name)
                    );
                    continue;
                };
                let colour = PALETTE[s.colour % PALETTE.len()];
                let _ = write!(
                    out,
                    r##"<line x1="{x:.1}" x2="{:.1}" y1="{:.1}" y2="{:.1}" stroke="{colour}" stroke-width="2.5" stroke-dasharray="{}"/><text x="{:.1}" y="{y:.1}">{}</text>"##,
                    x + 22.0,
                    y - 4.0,
                    y - 4.0,
                    DASHES[s.dash % DASHES.len()],
                    x + 26.0,
                    escape(name)
                );
            }
        }
    }
}

/// Draws one series: its band (if any), its line and its points.
fn draw_series(out: &mut String, f: &Frame, s: &Series) {
    let colour = PALETTE[s.colour % PALETTE.len()];
    let width = if s.dash == 0 { 3.5 } else { 1.8 };
    // Hollow markers on dashed lines show through a solid line they cover.
    let marker = if s.dash == 0 {
        format!(r##"r="3" fill="{colour}""##)
    } else {
        format!(r##"r="4" fill="white" stroke="{colour}" stroke-width="1.5""##)
    };
    if s.band.len() >= 2 {
        let mut d = String::new();
        for (j, (x, _, hi)) in s.band.iter().enumerate() {
            let _ = write!(
                d,
                "{}{:.1},{:.1} ",
                if j == 0 { "M" } else { "L" },
                f.x(*x),
                f.y(*hi)
            );
        }
        for (x, lo, _) in s.band.iter().rev() {
            let _ = write!(d, "L{:.1},{:.1} ", f.x(*x), f.y(*lo));
        }
        let _ = write!(
            out,
            r##"<path class="band" d="{d}Z" fill="{colour}" fill-opacity="0.12" stroke="none"/>"##
        );
    }
    let pts: Vec<(f64, f64)> = s.points.iter().map(|(x, y)| (f.x(*x), f.y(*y))).collect();
    let line: Vec<String> = pts.iter().map(|(x, y)| format!("{x:.1},{y:.1}")).collect();
    let _ = write!(
        out,
        r##"<polyline class="series" points="{}" fill="none" stroke="{colour}" stroke-width="{width}" stroke-dasharray="{}"><title>{}</title></polyline>"##,
        line.join(" "),
        DASHES[s.dash % DASHES.len()],
        escape(&s.name)
    );
    for (j, (x, y)) in pts.iter().enumerate() {
        let tip = s
            .tips
            .get(j)
            .map_or(String::new(), |t| format!("{}: {t}", s.name));
        let _ = write!(
            out,
            r##"<circle class="point" cx="{x:.1}" cy="{y:.1}" {}><title>{}</title></circle>"##,
            marker,
            escape(&tip)
        );
    }
}

/// Legend entries laid out in rows under the plot: (entry index, x, name).
fn legend_rows(names: &[String]) -> Vec<Vec<(usize, f64, String)>> {
    let mut rows: Vec<Vec<(usize, f64, String)>> = Vec::new();
    let mut x = W;
    for (i, name) in names.iter().enumerate() {
        let name = name.clone();
        let width = 34.0 + 6.0 * name.chars().count() as f64;
        if x + width > W - RIGHT || rows.is_empty() {
            rows.push(Vec::new());
            x = 8.0;
        }
        if let Some(row) = rows.last_mut() {
            row.push((i, x, name));
        }
        x += width;
    }
    rows
}

/// A scatter plot of labelled points with a least-squares line.
pub fn scatter(title: &str, x_label: &str, y_label: &str, points: &[(String, f64, f64)]) -> String {
    let bounds = |sel: fn(&(String, f64, f64)) -> f64| {
        let (lo, hi) = points
            .iter()
            .map(sel)
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
                (a.min(v), b.max(v))
            });
        if lo.is_finite() && hi > lo {
            let pad = (hi - lo) * 0.08;
            (lo - pad, hi + pad)
        } else {
            (0.0, 1.0)
        }
    };
    let (x0, x1) = bounds(|p| p.1);
    let (y0, y1) = bounds(|p| p.2);
    let f = Frame { x0, x1, y0, y1 };
    let mut out = String::new();
    axes(
        &mut out,
        &f,
        title,
        AxisLabels {
            x: x_label,
            y: y_label,
        },
        false,
        0.0,
    );
    let n = points.len() as f64;
    if n >= 2.0 {
        let mx = points.iter().map(|p| p.1).sum::<f64>() / n;
        let my = points.iter().map(|p| p.2).sum::<f64>() / n;
        let sxx: f64 = points.iter().map(|p| (p.1 - mx).powi(2)).sum();
        if sxx > 0.0 {
            let slope = points.iter().map(|p| (p.1 - mx) * (p.2 - my)).sum::<f64>() / sxx;
            let at = |x: f64| my + slope * (x - mx);
            let _ = write!(
                out,
                r##"<line x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="#d62728" stroke-dasharray="4 3"/>"##,
                f.x(x0),
                f.y(at(x0)),
                f.x(x1),
                f.y(at(x1))
            );
        }
    }
    for (name, x, y) in points {
        let _ = write!(
            out,
            r##"<circle class="point" cx="{:.1}" cy="{:.1}" r="3.5" fill="#1f77b4"><title>{}</title></circle>"##,
            f.x(*x),
            f.y(*y),
            escape(name)
        );
    }
    out.push_str("</svg>");
    out
}
