//! `stackbench seed db-read --store URL` and `stackbench serve db-read`: thin
//! wiring of the db-read contestant in `stackbench_serve::db_read`.

use anyhow::Context as _;
use stackbench_serve::db_read::{self, Config, seed::Store};

use crate::cli::{DbReadArgs, SeedCommand};

pub fn run(cmd: SeedCommand) -> anyhow::Result<()> {
    let SeedCommand::DbRead { store } = cmd;
    let store: Store = store.parse()?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let report = runtime.block_on(db_read::seed::seed(&store))?;
    println!("{report}");
    Ok(())
}

/// `serve db-read`: connect, print the listening line and the drivers, serve.
pub async fn serve_db_read(args: DbReadArgs) -> anyhow::Result<()> {
    let mut config = Config {
        postgres: args.postgres,
        mysql: args.mysql,
        redis: args.redis,
        sqlite: args.sqlite,
        pool: args.pool,
        seed: args.seed,
        ..Config::new()
    };
    for store in &args.stores {
        config.add_store(store)?;
    }
    let mut out = std::io::stdout();
    db_read::serve(&config, args.listen.bind, args.listen.port, "stackbench serve db-read", &mut out).await?;
    Ok(())
}
