package stackbench.vertx;

import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.templates.RowMapper;
import java.util.List;

/** One row of the db-read table {@code items}. */
record Item(int id, String name, int price) {
    /** The row mapper of every driver (and of SqlTemplate's mapTo). */
    static final RowMapper<Item> FROM_ROW =
            row -> new Item(row.getInteger("id"), row.getString("name"), row.getInteger("price"));

    static Item of(Row row) {
        return FROM_ROW.map(row);
    }

    JsonObject toJson() {
        return new JsonObject().put("id", id).put("name", name).put("price", price);
    }

    /** Rows lo then hi out of what the database returned, or null when one has no row (see {@link #missing}). */
    static Item[] inAnswerOrder(List<Item> found, int lo, int hi) {
        Item first = find(found, lo);
        Item second = find(found, hi);
        return first == null || second == null ? null : new Item[] {first, second};
    }

    /** The first of lo, hi without a row. */
    static int missing(List<Item> found, int lo, int hi) {
        return find(found, lo) == null ? lo : hi;
    }

    private static Item find(List<Item> found, int id) {
        for (Item it : found) {
            if (it.id == id) {
                return it;
            }
        }
        return null;
    }
}
