"""The model layer: settings, the connection (`connect`), accounting, replay cassettes, the local
model file and its shared server, code extraction from replies, and scripted fake models."""
