//! The `refrain` binary: parse the command line, start logging, run, map errors to exit codes.

use std::process::ExitCode;

fn main() -> ExitCode {
    match refrain::cli::main() {
        Ok(code) => code,
        Err(err) => {
            // Errors quote paths and stored text: escaped for the terminal.
            eprintln!("refrain: {}", refrain::term::text(&format!("{err:#}")));
            ExitCode::from(1)
        }
    }
}
