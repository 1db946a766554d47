//! The brief as text: `brief.tmpl` (embedded, or `.peat/brief.tmpl` on this desk) rendered
//! with minijinja over the same structure `--json` prints.

use anstyle::Style;
use minijinja::Environment;
use std::path::{Path, PathBuf};

use crate::cli::template::{line_environment, to_value};
use crate::cli::ui::{ACCENT, BOLD, DIM, Ui, WARNING, clip, paint, sanitize};
use crate::reads::brief::Brief;
use crate::reads::ladder::knum;

/// The template built into peat.
pub(crate) const EMBEDDED: &str = include_str!("brief.tmpl");

/// The template file a desk may put in its `.peat/` to replace the embedded one.
pub(crate) const OVERRIDE: &str = "brief.tmpl";

/// A template that does not parse or render.
#[derive(Debug)]
pub(crate) struct TemplateError {
    /// Where the template came from: its path, or `the embedded brief.tmpl`.
    pub(crate) origin: String,
    pub(crate) detail: String,
}

/// Where the template comes from: `<desk>/.peat/brief.tmpl` when present.
pub(crate) fn source(desk: &Path) -> Result<(String, Option<PathBuf>), TemplateError> {
    let path = desk.join(OVERRIDE);
    match std::fs::read_to_string(&path) {
        Ok(s) => Ok((s, Some(path))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok((EMBEDDED.to_string(), None)),
        Err(e) => Err(TemplateError {
            origin: path.display().to_string(),
            detail: format!("cannot read it: {e}"),
        }),
    }
}

/// Render `brief` through `template`. Styles apply only where `ui` allows colour; on a
/// terminal, transcript text is defused first.
pub(crate) fn render(
    brief: &Brief,
    template: &str,
    origin: Option<&Path>,
    ui: Ui,
) -> Result<String, TemplateError> {
    let origin_name = origin.map_or_else(
        || "the embedded brief.tmpl".to_string(),
        |p| p.display().to_string(),
    );
    let fail = |e: minijinja::Error| TemplateError {
        origin: origin_name.clone(),
        detail: e.to_string(),
    };
    let env = environment(ui);
    let tmpl = env.template_from_str(template).map_err(fail)?;
    let json = serde_json::to_value(brief).map_err(|e| TemplateError {
        origin: origin_name.clone(),
        detail: e.to_string(),
    })?;
    let json = if ui.stdout_tty { defuse(json) } else { json };
    tmpl.render(to_value(json)).map_err(fail)
}

/// The environment with peat's filters. Styles are identity unless `ui.color`.
pub(crate) fn environment(ui: Ui) -> Environment<'static> {
    let mut env = line_environment();
    let style = move |style: Style| move |s: String| paint(ui.color, style, &s);
    env.add_filter("h1", style(BOLD));
    env.add_filter("dim", style(DIM));
    env.add_filter("warn", style(WARNING));
    env.add_filter("accent", style(ACCENT));
    env.add_filter("clip", |s: String, n: usize| clip(&s, n));
    // On a terminal, the part of its line that may be shortened to fit (see `cli::fit`).
    env.add_filter("preview", move |s: String| match ui.width {
        Some(_) => crate::cli::fit::mark(&s),
        None => s,
    });
    env.add_filter("k", |n: i64| knum(n));
    env.add_filter("n", |n: i64, word: String| {
        crate::reads::ladder::knoun(n, &word)
    });
    env
}

/// Escape what a terminal would interpret in every string (transcript text, paths).
fn defuse(v: serde_json::Value) -> serde_json::Value {
    use serde_json::Value as J;
    match v {
        J::String(s) => J::String(sanitize(&s).into_owned()),
        J::Array(a) => J::Array(a.into_iter().map(defuse).collect()),
        J::Object(o) => J::Object(o.into_iter().map(|(k, v)| (k, defuse(v))).collect()),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reads::brief::{Active, LastSession};
    use crate::vocab::event::{Seq, SessionId};
    use minijinja::Value;

    fn plain() -> Ui {
        Ui {
            stdout_tty: false,
            width: None,
            stderr_tty: false,
            color: false,
            err_color: false,
            budget: crate::cli::budget::Budget::NONE,
        }
    }

    #[test]
    fn an_empty_record_says_how_to_start() {
        let brief = Brief {
            today: "2026-07-20".into(),
            ..Brief::default()
        };
        let out = render(&brief, EMBEDDED, None, plain()).unwrap();
        assert_eq!(
            out,
            "== peat · 2026-07-20 ==\n\nNothing is recorded here yet. Set this project up (ledger, hooks, model, its past\ntranscripts), or capture every transcript on this machine:\n  ▸ peat setup\n  ▸ peat import\n"
        );
    }

    #[test]
    fn styles_apply_only_with_colour_and_terminal_text_is_defused() {
        let brief = Brief {
            today: "2026-07-20".into(),
            events: 3,
            active: vec![Active {
                place: "acme\x1b[31m".into(),
                agent: None,
                session: SessionId("s".into()),
                short: "3f6c2a9e".into(),
                age: "<1h".into(),
                commits: 1,
                handle: "▸ peat show 3f6c2a9e".into(),
            }],
            last_session: Some(LastSession {
                place: "acme".into(),
                cwd: None,
                agent: None,
                here: true,
                session: SessionId("s".into()),
                seq: Seq(4),
                age: "<1h".into(),
                branch: None,
                text: "done   and\n\ndusted".into(),
                handle: "▸ peat show 3f6c2a9e 4".into(),
            }),
            ..Brief::default()
        };
        let out = render(&brief, EMBEDDED, None, plain()).unwrap();
        assert!(
            out.contains("  acme\x1b[31m [3f6c2a9e] — <1h ago, 1 commit  ▸ peat show 3f6c2a9e\n")
        );
        assert!(
            out.contains("last session (<1h ago):\n  done and dusted  ▸ peat show 3f6c2a9e 4\n")
        );
        let tty = Ui {
            stdout_tty: true,
            color: true,
            ..plain()
        };
        let out = render(&brief, EMBEDDED, None, tty).unwrap();
        assert!(out.starts_with("\x1b[1m== peat"));
        assert!(out.contains("acme\\u{1b}[31m"), "{out}");
    }

    #[test]
    fn a_broken_template_is_reported_with_its_origin() {
        let brief = Brief::default();
        let e = render(
            &brief,
            "{% if %}",
            Some(Path::new("/d/.peat/brief.tmpl")),
            plain(),
        )
        .unwrap_err();
        assert_eq!(e.origin, "/d/.peat/brief.tmpl");
        assert!(e.detail.contains("syntax error"), "{}", e.detail);
    }

    #[test]
    fn filters_count_and_clip() {
        let env = environment(plain());
        let r = |src: &str| env.render_str(src, Value::from(())).unwrap();
        assert_eq!(
            r("{{ 1 | n('commit') }}, {{ 3712 | n('tool') }}"),
            "1 commit, 3.7k tools"
        );
        assert_eq!(r("{{ 'a  b c' | clip(3) }}"), "a b…");
        assert_eq!(r("{{ 'x' | h1 }}{{ 'y' | warn }}"), "xy");
        assert_eq!(r("{{ 'said' | preview }}"), "said");
    }

    #[test]
    fn a_preview_is_marked_for_fitting_only_on_a_terminal_with_a_width() {
        let tty = Ui {
            stdout_tty: true,
            width: Some(60),
            ..plain()
        };
        let out = environment(tty)
            .render_str("{{ 'said' | preview }}", Value::from(()))
            .unwrap();
        assert_eq!(out, crate::cli::fit::mark("said"));
        assert_eq!(
            crate::cli::fit::line(&format!("  {out}  ▸ peat x"), 60),
            "  said  ▸ peat x"
        );
    }

    #[test]
    fn the_templates_warn_is_the_warning_colour_of_every_other_warning() {
        let tty = Ui {
            stdout_tty: true,
            color: true,
            ..plain()
        };
        let out = environment(tty)
            .render_str("{{ '2 fail' | warn }}", Value::from(()))
            .unwrap();
        assert_eq!(out, tty.warning("2 fail"));
        assert_eq!(out, "\x1b[33m2 fail\x1b[0m");
    }
}
