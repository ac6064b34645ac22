"""Lambda entry point of the gateway when no AWS Lambda Web Adapter runs it (the template's
``WebAdapterLayerVersion`` 0, as for ``sam local``): the whole app, buffered through mangum. A
stream (SendStreamingMessage, SubscribeToTask) is answered as one body holding all its events, once
it ends. With the adapter, ``run.sh`` serves the same app and streams."""

from a2a_serverless.lambda_.http import gateway_handler

handler = gateway_handler()
