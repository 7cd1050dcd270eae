//! `mdiag explain ID|SYMPTOM` and `mdiag explain --list`.

use crate::catalogue::catalogue;
use crate::cli::{ExplainArgs, GlobalArgs};
use crate::exit::Exit;
use crate::render::{Style, explain};

pub fn run(global: &GlobalArgs, args: &ExplainArgs) -> anyhow::Result<Exit> {
    let style = Style {
        lang: super::lang(global),
        color: super::color(global),
        now: jiff::Timestamp::now(),
    };
    let cat = catalogue();
    if args.list {
        super::emit(&explain::list(cat, &style))?;
        return Ok(Exit::Healthy);
    }
    let query = args.symptom.as_deref().unwrap_or("");
    let entries = cat.lookup(query);
    if entries.is_empty() {
        return Err(crate::exit::UsageError(format!(
            "no symptom or finding id {query:?}; `mdiag explain --list` shows them all"
        ))
        .into());
    }
    let text: Vec<String> = entries.iter().map(|e| explain::entry(e, &style)).collect();
    super::emit(&text.join("\n---\n\n"))?;
    Ok(Exit::Healthy)
}
