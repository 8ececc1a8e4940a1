package dev.toolctx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.BooleanNode;
import com.fasterxml.jackson.databind.node.IntNode;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.TextNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * tests/vectors/memory-store.json through {@link MemoryIdempotencyStore}
 * (go/memory_store_vectors_test.go is the model) on a clock each operation
 * sets, on whichever runtime this JVM runs the core (surefire runs it on
 * both: FFM on Java 25, Chicory on Java 17).
 */
class MemoryStoreVectorsTest {
    @Test
    void everyMemoryStoreCaseIsTheCores() throws Exception {
        JsonNode file = new ObjectMapper().readTree(Files.readString(Path.of("../../tests/vectors/memory-store.json")));
        assertEquals("toolctx-memory-store", file.path("format").asText());
        List<String> failed = new ArrayList<>();
        int passed = 0;
        for (JsonNode c : file.path("cases")) {
            String failure = run(c);
            if (failure == null) passed++;
            else failed.add(c.path("name").asText() + ": " + failure);
        }
        System.out.println(passed + " passed, " + failed.size() + " failed");
        assertTrue(passed > 0, "no memory store case ran");
        assertEquals(List.of(), failed);
    }

    private static String run(JsonNode c) {
        long[] now = {0};
        JsonNode given = c.get("capacity");
        Object raw = given == null || given.isNull() ? null : given.isIntegralNumber() ? (Object) given.asLong() : given.asDouble();
        MemoryIdempotencyStore store = new MemoryIdempotencyStore(raw, () -> now[0]);
        int want = c.path("expect_capacity").asInt();
        if (store.capacity != want) return "capacity " + store.capacity + ", expected " + want;
        int i = 0;
        for (JsonNode op : c.path("ops")) {
            now[0] = op.path("now").asLong();
            String key = op.path("key").asText();
            String entry = op.path("entry").asText();
            JsonNode got;
            switch (op.path("op").asText()) {
                case "claim" -> got = text(store.claim(key, entry, op.path("ms").asLong()));
                case "read" -> got = held(store.ask("toolctx_idem_memory_read", new String[] {key}));
                case "complete" -> {
                    store.complete(key, entry, op.path("ms").asLong());
                    got = null;
                }
                case "release" -> got = BooleanNode.valueOf(store.ask("toolctx_idem_memory_release", new String[] {key, entry}).equals("r"));
                case "len" -> got = IntNode.valueOf(store.size());
                default -> {
                    return "op " + i + ": unknown operation " + op.path("op");
                }
            }
            if (got != null && !got.equals(op.path("expect"))) {
                return "op " + i + " (" + op.path("op").asText() + "): expected " + op.path("expect") + ", got " + got;
            }
            i++;
        }
        return null;
    }

    private static JsonNode text(String s) {
        return s == null ? NullNode.getInstance() : TextNode.valueOf(s);
    }

    private static JsonNode held(String answer) {
        return text(answer.equals("n") ? null : answer.substring(1));
    }
}
