use clap::Parser;

// Requests build and drop many small JSON values; mimalloc serves those faster than glibc's
// allocator (measured with `cargo bench --bench http_throughput`). Built with `no_thp`: otherwise
// mimalloc asks for transparent huge pages on its eagerly committed arenas, each touched 2 MiB
// becomes resident, and an empty server holds 80 MB instead of 34 MB (`docs/decisions.md`).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use meldewerk::cli::{run_admin, Cli, Command};
use meldewerk::configuration::Settings;
use meldewerk::{simulate, startup, telemetry};

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    let mut settings = match Settings::load(cli.config.as_deref()) {
        Ok(settings) => settings,
        Err(e) => {
            eprintln!("error: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    if let Some(dir) = cli.data_dir {
        settings.data_dir = dir;
    }
    // The databases a server keeps open, to checkpoint once it has stopped and let go of them.
    let databases = match &cli.command {
        Command::Serve { .. } => startup::databases(&settings),
        Command::Simulate { name, .. } => vec![settings.simulator_journal_dir(name)],
        _ => Vec::new(),
    };
    // The runtime and every actor on it are dropped when `block_on` returns, and with them the
    // handles to the databases.
    let result = actix_rt::System::new().block_on(async move {
        match cli.command {
            Command::Serve { listen } => {
                if let Some(listen) = listen {
                    settings.listen = listen;
                }
                telemetry::init(&settings.log);
                startup::run(settings)
                    .await
                    .map(|_| None)
                    .map_err(|e| e.to_string())
            }
            Command::Simulate { name, listen } => {
                telemetry::init(&settings.log);
                simulate::run(settings, &name, &listen)
                    .await
                    .map(|_| None)
                    .map_err(|e| e.to_string())
            }
            admin => run_admin(&settings, admin)
                .await
                .map(Some)
                .map_err(|e| e.to_string()),
        }
    });
    if matches!(result, Ok(None)) {
        startup::checkpoint(&databases);
    }
    match result {
        Ok(Some(output)) => {
            println!("{output}");
            std::process::ExitCode::SUCCESS
        }
        Ok(None) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
