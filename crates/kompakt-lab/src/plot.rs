//! The charts of the ROOT I/O team's codec studies, for the user's data: compression ratio
//! against compression speed and against decompression speed (log speed axes), one line per
//! codec through its levels, each point labelled with its level. PNG or SVG, by the file's
//! extension; the font is compiled in, so the charts draw on a machine with no fonts.

use crate::{Error, Result, Row};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::collections::BTreeSet;
use std::path::Path;
use std::sync::OnceLock;

/// DejaVu Sans Mono (fonts/DejaVu-LICENSE): free to embed and redistribute.
const FONT: &[u8] = include_bytes!("../fonts/DejaVuSansMono.ttf");
// Registered under the generic name, so SVG viewers fall back to their own monospace font.
const FAMILY: &str = "monospace";

fn register_font() -> Result<()> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = *REGISTERED.get_or_init(|| plotters::style::register_font(FAMILY, FontStyle::Normal, FONT).is_ok());
    if ok {
        Ok(())
    } else {
        Err(Error("the chart's embedded font could not be loaded".into()))
    }
}

/// One line of a chart: a codec (with what else varies between the rows) through its levels.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub name: String,
    /// (level label, compression MB/s, decompression MB/s, ratio), in level order.
    pub points: Vec<(String, f64, f64, f64)>,
}

/// The rows as chart lines: one per codec name, split further by file, filter, block size and
/// thread count when those vary. The memcpy row is not a codec.
pub fn series(rows: &[Row]) -> Vec<Series> {
    let rows: Vec<&Row> = rows.iter().filter(|r| r.codec != "memcpy").collect();
    let varies = |key: &dyn Fn(&Row) -> String| rows.iter().map(|r| key(r)).collect::<BTreeSet<_>>().len() > 1;
    let (files, filters, blocks, threads) = (
        varies(&|r| r.file.clone()),
        varies(&|r| r.filter.clone()),
        varies(&|r| r.block_size.to_string()),
        varies(&|r| r.threads.to_string()),
    );
    let mut out: Vec<Series> = Vec::new();
    for r in rows {
        let (codec, level) = match r.codec.split_once(':') {
            Some((name, level)) => (name.to_string(), level.to_string()),
            None => (r.codec.clone(), String::new()),
        };
        let mut name = codec;
        if files {
            name = format!("{} {name}", r.file);
        }
        if filters {
            name = format!("{name} {}", r.filter);
        }
        if blocks {
            name = format!("{name} {}", crate::size_option(r.block_size));
        }
        if threads {
            name = format!("{name} T{}", r.threads);
        }
        let point = (level, r.compress.mbps(r.raw), r.decompress.mbps(r.raw), r.ratio());
        match out.iter_mut().find(|s| s.name == name) {
            Some(s) => s.points.push(point),
            None => out.push(Series {
                name,
                points: vec![point],
            }),
        }
    }
    for s in &mut out {
        s.points.sort_by_key(|p| p.0.parse::<i64>().unwrap_or(i64::MIN));
    }
    out
}

/// Draws the two charts of `rows` side by side into `path` (`.png` or `.svg`), titled `title`.
pub fn plot(rows: &[Row], title: &str, path: &Path) -> Result<()> {
    let lines = series(rows);
    if lines.is_empty() {
        return Err(Error("nothing to plot: no codec was measured".into()));
    }
    register_font()?;
    let size = (1400, 640);
    let extension = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
    let failed = |e: String| Error(format!("{}: cannot draw the chart: {e}", path.display()));
    match extension.as_deref() {
        Some("png") => {
            let root = BitMapBackend::new(path, size).into_drawing_area();
            draw(&root, &lines, title).map_err(failed)?;
            root.present().map_err(|e| failed(e.to_string()))
        }
        Some("svg") => {
            let root = SVGBackend::new(path, size).into_drawing_area();
            draw(&root, &lines, title).map_err(failed)?;
            root.present().map_err(|e| failed(e.to_string()))
        }
        _ => Err(Error(format!(
            "{}: a chart is written as .png or .svg (by the file's extension)",
            path.display()
        ))),
    }
}

/// Speed labels at 1, 2 and 5 of each power of ten only: a log axis spanning one decade gets
/// a label at every multiple, and they run into each other.
fn speed_label(v: &f64) -> String {
    let mantissa = v / 10f64.powf(v.log10().floor());
    if [1.0, 2.0, 5.0, 10.0].iter().any(|m| (mantissa - m).abs() < 0.01) {
        if *v >= 1.0 {
            format!("{v:.0}")
        } else {
            format!("{v}")
        }
    } else {
        String::new()
    }
}

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    lines: &[Series],
    title: &str,
) -> std::result::Result<(), String> {
    let text = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    root.fill(&WHITE).map_err(text)?;
    let root = root.titled(title, (FAMILY, 22)).map_err(text)?;
    let (left, right) = root.split_horizontally(root.dim_in_pixel().0 / 2);
    let ratios = lines.iter().flat_map(|s| s.points.iter().map(|p| p.3));
    let (low, high) = ratios.fold((f64::INFINITY, 0.0f64), |(lo, hi), r| (lo.min(r), hi.max(r)));
    let ratio_axis = (low * 0.95).min(1.0)..high * 1.05 + 0.05;
    for (area, axis, what) in [
        (&left, 1usize, "compression MB/s (log)"),
        (&right, 2usize, "decompression MB/s (log)"),
    ] {
        let speed = |p: &(String, f64, f64, f64)| if axis == 1 { p.1 } else { p.2 };
        let speeds = lines.iter().flat_map(|s| s.points.iter().map(speed));
        let (slow, fast) = speeds.fold((f64::INFINITY, 0.0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
        let mut chart = ChartBuilder::on(area)
            .margin(16)
            .x_label_area_size(44)
            .y_label_area_size(56)
            .build_cartesian_2d((slow / 1.5..fast * 1.5).log_scale(), ratio_axis.clone())
            .map_err(text)?;
        chart
            .configure_mesh()
            .x_desc(what)
            .y_desc("ratio")
            .label_style((FAMILY, 13))
            .axis_desc_style((FAMILY, 15))
            .light_line_style(RGBColor(238, 238, 238))
            .x_label_formatter(&speed_label)
            .draw()
            .map_err(text)?;
        for (i, line) in lines.iter().enumerate() {
            let color = Palette99::pick(i).to_rgba();
            let points: Vec<(f64, f64)> = line.points.iter().map(|p| (speed(p), p.3)).collect();
            chart
                .draw_series(LineSeries::new(points.clone(), color.stroke_width(2)))
                .map_err(text)?
                .label(line.name.clone())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(3)));
            chart
                .draw_series(points.iter().map(|&p| Circle::new(p, 4, color.filled())))
                .map_err(text)?;
            chart
                .draw_series(
                    line.points
                        .iter()
                        .zip(&points)
                        .filter(|(p, _)| !p.0.is_empty())
                        .map(|(p, &at)| Text::new(p.0.clone(), at, (FAMILY, 12).into_font().color(&BLACK))),
                )
                .map_err(text)?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .label_font((FAMILY, 13))
            .border_style(BLACK)
            .background_style(WHITE.mix(0.85))
            .draw()
            .map_err(text)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(codec: &str, threads: usize, ratio: f64, compress: f64, decompress: f64) -> Row {
        crate::tests::synthetic_row(codec, threads, ratio, compress, decompress)
    }

    fn rows() -> Vec<Row> {
        vec![
            row("memcpy", 1, 1.0, 10_000.0, 10_000.0),
            row("zstd:9", 1, 3.2, 60.0, 900.0),
            row("zstd:1", 1, 2.8, 400.0, 1_000.0),
            row("zstd:-3", 1, 2.0, 900.0, 1_800.0),
            row("lz4", 1, 1.9, 700.0, 3_000.0),
            row("zstd:1", 2, 2.8, 780.0, 1_900.0),
        ]
    }

    #[test]
    fn speed_labels_are_one_two_five() {
        let labels: Vec<String> = [100.0, 200.0, 300.0, 500.0, 700.0, 1000.0, 6000.0, 0.5]
            .iter()
            .map(speed_label)
            .collect();
        assert_eq!(labels, ["100", "200", "", "500", "", "1000", "", "0.5"]);
    }

    #[test]
    fn series_are_codecs_through_their_levels_split_by_what_varies() {
        let lines = series(&rows());
        let names: Vec<&str> = lines.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["zstd T1", "lz4 T1", "zstd T2"], "memcpy is no codec");
        let levels: Vec<&str> = lines[0].points.iter().map(|p| p.0.as_str()).collect();
        assert_eq!(levels, ["-3", "1", "9"]);
        assert_eq!(lines[1].points[0].0, "", "lz4 has no level to label");
        // One thread count: no T in the names.
        let one: Vec<Row> = rows().into_iter().filter(|r| r.threads == 1).collect();
        assert_eq!(
            series(&one).iter().map(|s| s.name.clone()).collect::<Vec<_>>(),
            ["zstd", "lz4"]
        );
    }

    #[test]
    fn a_png_chart_is_a_valid_image_with_every_series_in_its_colour() {
        let dir = std::env::temp_dir().join(format!("kompakt-lab-plot-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("chart.png");
        plot(&rows(), "test data", &path).unwrap();
        let image = image::open(&path).unwrap().to_rgb8();
        assert_eq!(image.dimensions(), (1400, 640));
        for i in 0..series(&rows()).len() {
            let c = Palette99::pick(i).to_rgba();
            let count = image.pixels().filter(|p| p.0 == [c.0, c.1, c.2]).count();
            assert!(count > 100, "series {i} drawn in {count} pixels of its colour");
        }
        // Mostly white: a chart, not a failed fill.
        let white = image.pixels().filter(|p| p.0 == [255, 255, 255]).count();
        assert!(white > image.pixels().len() / 2);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_svg_chart_names_its_series_and_axes() {
        let dir = std::env::temp_dir().join(format!("kompakt-lab-svg-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("chart.SVG");
        plot(&rows(), "test data", &path).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..100.min(svg.len())]);
        for text in [
            "zstd T1",
            "lz4 T1",
            "zstd T2",
            "compression MB/s (log)",
            "decompression MB/s (log)",
            "test data",
        ] {
            assert!(svg.contains(text), "{text}");
        }
        // Wrong extension, and nothing to draw: errors that say so.
        let err = plot(&rows(), "t", &dir.join("chart.jpg")).unwrap_err();
        assert!(err.0.contains(".png or .svg"), "{err}");
        let err = plot(&rows()[..1], "t", &path).unwrap_err();
        assert!(err.0.contains("nothing to plot"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
