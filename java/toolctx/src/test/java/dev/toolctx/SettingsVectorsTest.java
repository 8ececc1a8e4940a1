package dev.toolctx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * tests/vectors/settings.json through {@link Settings#read} (go/settings_vectors_test.go
 * is the model): each case's raw value as Java holds it (null, Boolean, a
 * Long or Double, String, anything else), the value read or the refusal.
 */
class SettingsVectorsTest {
    @Test
    void everySettingsCaseIsTheCores() throws Exception {
        JsonNode file = new ObjectMapper().readTree(Files.readString(Path.of("../../tests/vectors/settings.json")));
        assertEquals("toolctx-settings", file.path("format").asText());
        List<String> failed = new ArrayList<>();
        int passed = 0;
        for (JsonNode c : file.path("cases")) {
            JsonNode raw = c.get("raw");
            Object value = raw == null || raw.isNull() ? null
                    : raw.isBoolean() ? raw.asBoolean()
                    : raw.isIntegralNumber() && raw.canConvertToLong() ? raw.asLong()
                    : raw.isNumber() ? raw.asDouble()
                    : raw.isTextual() ? raw.asText()
                    : raw;
            JsonNode expect = c.path("expect");
            String got;
            try {
                got = "value " + Settings.read(c.path("setting").asText(), value);
            } catch (ToolctxException e) {
                got = e.code() + " " + e.getMessage();
            }
            JsonNode want = expect.get("value");
            String expected = want == null ? expect.path("error").asText() + " " + expect.path("message").asText()
                    : "value " + (want.isNumber() ? Long.toString(want.asLong()) : want.asText());
            if (expected.equals(got)) passed++;
            else failed.add(c.path("name").asText() + ": expected " + expected + ", got " + got);
        }
        System.out.println(passed + " passed, " + failed.size() + " failed");
        assertTrue(passed > 0, "no settings case ran");
        assertEquals(List.of(), failed);
    }
}
