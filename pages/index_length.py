import streamlit as st

st.title("index_length")
st.info("This page is being built.")
