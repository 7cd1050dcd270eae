//! Where `cargo xtask bench dump` finds the YAML time going: reads a YAML
//! file on one thread, either as the tokenizer's events alone (`events`:
//! granit-parser, which mdiag's reader is fed by, counting events) or
//! through serde-saphyr into nothing (`serde-saphyr`: the layer mdiag read
//! YAML through before, as `IgnoredAny`). Prints what it counted, so the
//! work is not optimised away.

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [mode, path] = args.as_slice() else {
        eprintln!("usage: yaml-floor events|serde-saphyr FILE.yaml");
        return ExitCode::from(2);
    };
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{path}: {e}");
            return ExitCode::from(2);
        }
    };
    let counted = match mode.as_str() {
        "events" => {
            let options = granit_parser::options! { emit_comments: false };
            let mut events = 0usize;
            for event in granit_parser::Parser::new_from_str_with_options(&text, options) {
                if let Err(e) = event {
                    eprintln!("{path}: {e}");
                    return ExitCode::from(1);
                }
                events += 1;
            }
            events
        }
        "serde-saphyr" => {
            let mut budget = serde_saphyr::Budget::default();
            budget.max_reader_input_bytes = None;
            budget.max_events = budget.max_events.max(text.len());
            budget.max_nodes = budget.max_nodes.max(text.len());
            budget.max_total_scalar_bytes = budget.max_total_scalar_bytes.max(text.len());
            let mut options = serde_saphyr::Options::default();
            options.budget = Some(budget);
            match serde_saphyr::from_multiple_with_options::<serde::de::IgnoredAny>(&text, options)
            {
                Ok(documents) => documents.len(),
                Err(e) => {
                    eprintln!("{path}: {e}");
                    return ExitCode::from(1);
                }
            }
        }
        other => {
            eprintln!("unknown mode {other}: events or serde-saphyr");
            return ExitCode::from(2);
        }
    };
    println!("{counted}");
    ExitCode::SUCCESS
}
