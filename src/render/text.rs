//! The few interface words of the human view (headings and labels), read
//! once per language from the `label.*` messages of `messages.yaml`. The
//! symptom texts themselves live in the catalogue.

use std::sync::OnceLock;

use mdiag_core::catalogue::{Lang, messages};

/// Declares `Labels` with one `&'static str` field per `label.FIELD`
/// message, and the list of those ids.
macro_rules! labels {
    ($($(#[$doc:meta])* $field:ident),* $(,)?) => {
        pub struct Labels {
            $($(#[$doc])* pub $field: &'static str,)*
        }

        /// Every message id a label is read from.
        #[cfg(test)]
        const IDS: &[&str] = &[$(concat!("label.", stringify!($field))),*];

        fn build(lang: Lang) -> Labels {
            Labels {
                $($field: label(concat!("label.", stringify!($field)), lang),)*
            }
        }
    };
}

labels! {
    chain,
    timeline,
    timeline_hint,
    pods,
    findings,
    no_findings,
    evidence,
    cause,
    judge,
    check,
    fix,
    verify,
    gaps,
    complete_with,
    not_reached,
    waiting,
    slowest,
    /// The mark of the missing step a failure holds up (not a slow one).
    failing,
    /// A step whose objects were not read.
    unknown,
    serving_unknown,
    judged_at,
    serving_yes,
    serving_no,
    old_pods,
    symptoms,
    clock_live,
    clock_capture,
    clock_newest,
    /// The label of a log's last lines under a finding.
    log,
    /// `(previous run)` / `(current run)` after the container's name.
    previous_run,
    current_run,
    /// After the findings' count in the compact view.
    verbose_hint,
    /// The heading of a single gap, on its line.
    gaps_one,
    /// The label of the command to run first, under the headline.
    next,
}

/// A label's text in `lang`; the id itself if the catalogue lacks it (a
/// defect the tests rule out).
fn label(id: &'static str, lang: Lang) -> &'static str {
    messages().get(id).map(|t| t.get(lang)).unwrap_or(id)
}

impl Labels {
    pub fn for_lang(lang: Lang) -> &'static Labels {
        static LABELS: OnceLock<[Labels; 2]> = OnceLock::new();
        let [en, zh] = LABELS.get_or_init(|| [build(Lang::En), build(Lang::Zh)]);
        match lang {
            Lang::En => en,
            Lang::Zh => zh,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_label_is_in_the_catalogue_in_both_languages() {
        for id in IDS {
            let t = messages()
                .get(*id)
                .unwrap_or_else(|| panic!("{id} is not in messages.yaml"));
            assert!(!t.en.is_empty() && !t.zh.is_empty(), "{id} is empty");
        }
        assert_eq!(Labels::for_lang(Lang::En).chain, "Chain");
        assert_eq!(Labels::for_lang(Lang::Zh).chain, "对象链");
    }
}
