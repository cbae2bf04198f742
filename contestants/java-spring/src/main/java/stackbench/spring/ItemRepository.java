package stackbench.spring;

import java.util.List;
import org.springframework.data.jpa.repository.JpaRepository;
import org.springframework.data.jpa.repository.Query;
import org.springframework.data.repository.query.Param;

/**
 * The jpa-* drivers: Spring Data JPA over Hibernate. One JPQL query for both
 * rows, one round trip. As for any query method declared on a repository
 * interface, Spring Data opens no transaction around it: Hibernate runs it on
 * an auto-commit connection from the pool.
 */
interface ItemRepository extends JpaRepository<Item, Integer> {
    @Query("select i from Item i where i.id in (:lo, :hi) order by i.id")
    List<Item> findPair(@Param("lo") int lo, @Param("hi") int hi);
}
