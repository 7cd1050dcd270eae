//! The anchor of `cargo xtask bench dump`: a bare `serde_json` parse of a
//! JSON file into a `Value`, as fast as serde_json reads (from memory),
//! printing the number of items so the parse is not optimised away.

fn main() -> std::process::ExitCode {
    let Some(path) = std::env::args_os().nth(1) else {
        eprintln!("usage: json-anchor FILE.json");
        return std::process::ExitCode::from(2);
    };
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("{}: {e}", path.to_string_lossy());
            return std::process::ExitCode::from(2);
        }
    };
    match serde_json::from_slice::<serde_json::Value>(&bytes) {
        Ok(v) => {
            let items = v["items"].as_array().map_or(0, Vec::len);
            println!("{items}");
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{e}");
            std::process::ExitCode::from(1)
        }
    }
}
