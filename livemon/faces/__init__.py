"""The faces: the Textual commentary screen, the web (WebSocket, overlay) and MQTT out, fed by the hub."""
