//! `sea-orm-postgres` and `sea-orm-mysql`: the SeaORM ORM over sqlx, the
//! layer people write with (the original experiment's "Ecto" row). The request is what a
//! SeaORM user writes: `Entity::find().filter(Column::Id.is_in([a, b])).all(&db)`
//! on an entity declared with `DeriveEntityModel`; SeaORM builds the SQL with
//! sea-query on every call and maps rows into `Model`s.
//!
//! The `DatabaseConnection` wraps an sqlx pool built by
//! [`super::sqlx_driver::pool_options`], the same settings as the sqlx drivers,
//! so SeaORM's cost over sqlx is the ORM alone.

use sea_orm::{ColumnTrait as _, DatabaseConnection, EntityTrait as _, QueryFilter as _};
use sea_orm::{SqlxMySqlConnector, SqlxPostgresConnector};

use super::finish;
use super::postgres::item;
use super::sqlx_driver::{mysql_pool, pg_pool};
use super::{Driver, Drivers, Fetch, FetchError, FetchFuture, Rows, SetupError};

/// The `items` table as a SeaORM entity.
#[allow(clippy::pedantic)] // derive output
pub(crate) mod items {
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "items")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
        pub id: i32,
        pub name: String,
        pub price: i32,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

struct SeaOrm {
    driver: Driver,
    db: DatabaseConnection,
}

impl Fetch for SeaOrm {
    fn fetch(&self, ids: [u32; 2]) -> FetchFuture<'_> {
        Box::pin(async move {
            let models = items::Entity::find()
                .filter(items::Column::Id.is_in(ids.map(|id| id as i32)))
                .all(&self.db)
                .await
                .map_err(|e| FetchError::new(self.driver, e))?;
            models.into_iter().map(|m| item(self.driver, m.id, m.name, m.price)).collect::<Result<Rows, _>>()
        })
    }
}

/// Adds `sea-orm-postgres` on `url`.
pub(crate) async fn add_postgres(drivers: &mut Drivers, url: &str, size: u32) -> Result<(), SetupError> {
    let driver = Driver::SeaOrmPostgres;
    let db = SqlxPostgresConnector::from_sqlx_postgres_pool(pg_pool(driver, url, size).await?);
    finish(drivers, driver, url, size, Box::new(SeaOrm { driver, db })).await
}

/// Adds `sea-orm-mysql` on `url`.
pub(crate) async fn add_mysql(drivers: &mut Drivers, url: &str, size: u32) -> Result<(), SetupError> {
    let driver = Driver::SeaOrmMysql;
    let db = SqlxMySqlConnector::from_sqlx_mysql_pool(mysql_pool(driver, url, size).await?);
    finish(drivers, driver, url, size, Box::new(SeaOrm { driver, db })).await
}
