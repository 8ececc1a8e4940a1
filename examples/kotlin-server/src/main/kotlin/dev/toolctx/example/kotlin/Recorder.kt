package dev.toolctx.example.kotlin

import com.fasterxml.jackson.databind.ObjectMapper
import java.io.FileOutputStream

/** `--record FILE`: one JSON line `{"run": tool}` for every tool run, written before it runs (the test client reads them). */
class Recorder(path: String) {
    private val out = FileOutputStream(path, true)
    private val json = ObjectMapper()

    @Synchronized
    fun run(tool: String) {
        out.write((json.writeValueAsString(mapOf("run" to tool)) + "\n").toByteArray())
        out.flush()
    }
}
