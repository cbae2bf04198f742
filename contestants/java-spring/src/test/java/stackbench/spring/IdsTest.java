package stackbench.spring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class IdsTest {
    @Test
    void readsAAndBWithTheirDefaults() throws Exception {
        assertEquals(new Ids(1, 2), Ids.parse(null));
        assertEquals(new Ids(1, 2), Ids.parse(""));
        assertEquals(new Ids(10000, 9), Ids.parse("b=9&x=y&a=10000"));
        assertEquals(new Ids(2147483647, 2), Ids.parse("a=2147483647"));
        assertEquals(new Ids(7, 7), Ids.parse("a=7&b=7"));
        assertEquals(new Ids(3, 2), Ids.parse("&&a=3&"));
        assertEquals(new Ids(10, 2), Ids.parse("a=0010"));
        assertEquals(3, new Ids(9, 3).lo());
        assertEquals(9, new Ids(9, 3).hi());
    }

    @Test
    void refusesIdsThatAreNotPositiveInt32() {
        for (String q : List.of("a=0", "a=-1", "a=+1", "a=1.0", "a=", "a", "a=2147483648", "a=99999999999",
                "a=%31", "a=abc", "a=1111111111111111111111")) {
            Ids.BadIds e = assertThrows(Ids.BadIds.class, () -> Ids.parse(q), q);
            assertTrue(e.getMessage().contains("`a`"), q);
        }
        Ids.BadIds e = assertThrows(Ids.BadIds.class, () -> Ids.parse("b=1&b=2"));
        assertTrue(e.getMessage().contains("more than once"));
    }
}
