package stackbench.spring;

import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

/** One row of the db-read table {@code items}, as a JPA entity (the jpa-* drivers) and as JSON. */
@Entity
@Table(name = "items")
public class Item {
    @Id
    private Integer id;
    private String name;
    private Integer price;

    protected Item() {}

    Item(int id, String name, int price) {
        this.id = id;
        this.name = name;
        this.price = price;
    }

    public Integer getId() {
        return id;
    }

    public String getName() {
        return name;
    }

    public Integer getPrice() {
        return price;
    }

    @Override
    public String toString() {
        return "Item[id=" + id + ", name=" + name + ", price=" + price + "]";
    }
}
