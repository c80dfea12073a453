"""A stand-in for the ModelArts notebook SDK (``modelarts``, not on PyPI) over the emulator.

It follows the shared reference modelarts.md §1 and Huawei's SDK reference pages (sdkreference
``modelarts_04_0422`` create, ``_0423`` list, ``_0424`` details, ``_0426`` delete, ``_0427``
terminate, ``_0428`` logs, ``_0123``/``_0155`` session, ``_0437`` obs copy) and what public code
calls: its classes take the documented arguments (an unknown keyword is a ``TypeError``, as with
the real classes), build the REST v2 body the reference maps them to, and send it to the
running emulator over HTTP with the official clients (``huaweicloudsdkmodelarts``,
esdk-obs-python). It imports nothing of majob but where the emulator listens, so majob's
notebook backend is tested against an SDK, not against itself.

What the pages leave open, it does the plainest way and says so where it does it (``[U]``).
"""
